"""Serving's PostgreSQL repositories, one module per table family; the unit of work joining them is
`services.serving.adapters.repository`."""
