"""SQL repositories of the memory database, one module per aggregate."""
