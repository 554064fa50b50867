"""The environment variables docshelf reads: one per field of :class:`Settings`; and the
flags of those that are flags too."""

from docshelf.app.settings import Settings, setting_flags

SETTINGS_PREFIX: str = Settings.model_config.get("env_prefix", "")
SETTING_VARIABLES = frozenset(f"{SETTINGS_PREFIX}{name.upper()}" for name in Settings.model_fields)
#: (variable, flag) of each setting that is a flag.
SETTING_FLAGS = frozenset(
    (f"{SETTINGS_PREFIX}{field.upper()}", name) for field, name, _ in setting_flags()
)
