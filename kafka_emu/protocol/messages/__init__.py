"""One module per Kafka API, declarations only. Each API module exposes ``API``."""
