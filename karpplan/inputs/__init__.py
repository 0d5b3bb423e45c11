"""Reading the inputs: files, directories and stdin into documents that remember the file:line of every
field."""
