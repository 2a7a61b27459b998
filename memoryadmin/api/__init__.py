"""The agents' door: a REST API (Django REST Framework) over the one edit service."""
