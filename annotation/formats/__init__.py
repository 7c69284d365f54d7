"""Import/export of the seed benchmarks' own formats, one module per benchmark."""
