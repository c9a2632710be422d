// HearthServer: see docs/ARCHITECTURE.md
