// Keeps a library linkable while its folder has no source of its own yet.
