"""HIT input files: parser, writer and errors (no torch)."""
