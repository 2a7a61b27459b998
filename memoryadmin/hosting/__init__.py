"""What running memoryadmin as a service needs, none of it about memories: health probes,
request ids, logs, 503 on a database outage, the shared cache, the installation's private files
and its first administrator."""
