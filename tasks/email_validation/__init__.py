"""Email validation: `is_valid(address) -> bool`, graded against the email-validator package's labels."""
