"""Online bin packing, FunSearch's benchmark."""
