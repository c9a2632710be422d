// fuzz target placeholder
