"""Test helpers: spec schemas, real servers, sample shelves."""
