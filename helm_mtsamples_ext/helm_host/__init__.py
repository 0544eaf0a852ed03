"""What needs HELM installed and is not a door: the compatibility checks of the two HELMs, the model check, the
nltk quieting and the stored prompt default."""
