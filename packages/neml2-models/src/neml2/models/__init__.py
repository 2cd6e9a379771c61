"""neml2 material models: the Model contract, composition and the registry."""
