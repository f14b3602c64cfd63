"""The tools a reply's model may call, one module per tool, each declaring its name, its
arguments' schema and what it may read; who may see what is decided in `scope`, which every
tool that reads goes through."""
