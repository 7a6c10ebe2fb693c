"""Analysis over replays: prompt-cache costs (and, as they land, sweeps, fleets, information loss)."""

from .costs import CostComparison, CostReport, PriceModel, baseline_costs, compare_costs, price_model, replay_costs

__all__ = ["CostComparison", "CostReport", "PriceModel", "baseline_costs", "compare_costs", "price_model",
           "replay_costs"]
