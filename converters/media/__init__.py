"""Pictures, sound and films: described from their metadata, never decoded."""
