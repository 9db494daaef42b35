"""Git's own files and `.git` entries: what a step changed in them, planted ones quarantined, configs judged, nested repositories and the `.git`s the model made."""
