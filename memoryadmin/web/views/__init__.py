"""Function views, one per page; HTMX requests get the page's fragment instead of the page."""
