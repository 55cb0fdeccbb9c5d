"""Where knowledge comes from: walking a source directory (and, later, git)."""
