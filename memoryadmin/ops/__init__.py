"""What an operator needs to keep memoryadmin running: health probes, request ids, logs."""
