"""Analysis over replays: prompt-cache costs (and, as they land, sweeps, fleets, information loss)."""

from .costs import CostComparison
from .costs import CostReport
from .costs import PriceModel
from .costs import baseline_costs
from .costs import compare_costs
from .costs import price_model
from .costs import replay_costs

__all__ = ["CostComparison", "CostReport", "PriceModel", "baseline_costs", "compare_costs", "price_model",
           "replay_costs"]
