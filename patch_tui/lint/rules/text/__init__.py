"""Rules on the texts people and agents read: hidden Unicode, instructions to an AI, template
text left in a description."""
