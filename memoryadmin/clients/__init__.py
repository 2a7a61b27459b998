"""Client libraries for applications that keep their agents' memory in memoryadmin."""
