"""Section ops on a skill's markdown body; each previews with dry_run, writing nothing."""
