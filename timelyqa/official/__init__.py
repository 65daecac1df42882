"""Official sites (RT-QA): questions answered live by declarative recipes, resolved at evaluation time."""
