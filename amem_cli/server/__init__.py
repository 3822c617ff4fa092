"""The warm per-vault server (`amem serve`) and the CLI's way of using it."""
