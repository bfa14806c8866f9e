"""Training: what the recipes share (resume, model cards, the save check), losses, rewards and datasets."""
