// HearthStore: see docs/ARCHITECTURE.md
