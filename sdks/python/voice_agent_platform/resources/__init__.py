"""Hand-written additions to generated resources."""
