"""Costs: the price table's rules (which price applies to which model on which day) and
turning token counts into US dollars. Reading token counts is analytics.queries.costs."""
