"""Reading the inputs: readers and column mapping, the optional inputs, the users' segment
values, TREC files, the lists' order, row checks, failure diagnosis, the change watch,
`convert`, and `init`'s column sniffing and starter config."""
