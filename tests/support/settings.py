"""The environment variables docshelf reads: one per field of :class:`Settings`."""

from docshelf.app.settings import Settings

SETTINGS_PREFIX: str = Settings.model_config.get("env_prefix", "")
SETTING_VARIABLES = frozenset(f"{SETTINGS_PREFIX}{name.upper()}" for name in Settings.model_fields)
