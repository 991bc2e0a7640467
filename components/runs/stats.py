"""Episode statistics: ``EpisodeRecord``, named aggregators, ``StatsTracker``, ``EvalReport``."""
from __future__ import annotations

import math
import statistics
from collections import deque
from dataclasses import asdict, dataclass, field


@dataclass
class EpisodeRecord:
    total_reward: float
    length: int
    status: str  # "Terminated" or "Truncated"
    extras: dict = field(default_factory=dict)

    def value(self, source: str) -> float:
        if source == "reward":
            return self.total_reward
        if source == "length":
            return float(self.length)
        return float(self.extras[source])

    def to_dict(self) -> dict:
        return asdict(self)


class Aggregator:
    def __init__(self, source: str = "reward"):
        self.source = source
        self.values: list[float] = []

    def push(self, x: float) -> None:
        self.values.append(x)

    def result(self) -> float:
        raise NotImplementedError


class Mean(Aggregator):
    def result(self):
        return statistics.fmean(self.values) if self.values else math.nan


class Max(Aggregator):
    def result(self):
        return max(self.values) if self.values else math.nan


class Min(Aggregator):
    def result(self):
        return min(self.values) if self.values else math.nan


class Last(Aggregator):
    def result(self):
        return self.values[-1] if self.values else math.nan


class Std(Aggregator):
    def result(self):
        return statistics.pstdev(self.values) if self.values else math.nan


class RollingMean(Aggregator):
    def __init__(self, source: str = "reward", window: int = 100):
        super().__init__(source)
        if window < 1:
            raise ValueError(f"RollingMean window must be >= 1, got {window}")
        self.values = deque(maxlen=window)

    def result(self):
        return statistics.fmean(self.values) if self.values else math.nan


#: aggregator kinds by class name, for ``StatsTracker.from_state_dict``
AGGREGATORS = {cls.__name__: cls for cls in (Mean, Max, Min, Last, Std, RollingMean)}


class StatsTracker:
    """Feeds every recorded episode to named aggregators; ``summary()`` -> {name: value}."""

    def __init__(self, aggregators: dict[str, Aggregator] | None = None):
        self.aggregators = aggregators if aggregators is not None else {
            "mean_reward": Mean("reward"),
            "std_reward": Std("reward"),
            "max_reward": Max("reward"),
            "min_reward": Min("reward"),
            "recent_reward": RollingMean("reward", 100),
            "mean_length": Mean("length"),
        }
        self.episodes = 0

    def record(self, episode: EpisodeRecord) -> None:
        self.episodes += 1
        for agg in self.aggregators.values():
            agg.push(episode.value(agg.source))

    def summary(self) -> dict:
        return {"episodes": self.episodes, **{name: agg.result() for name, agg in self.aggregators.items()}}

    # --- checkpoints: plain data only (a checkpoint is loaded with torch.load(weights_only=True)) ---
    def state_dict(self) -> dict:
        """``{"episodes": n, "aggregators": {name: {"kind", "source", "values", "window"}}}``: lists, numbers, strings."""
        return {
            "episodes": self.episodes,
            "aggregators": {
                name: {"kind": type(agg).__name__, "source": agg.source, "values": list(agg.values),
                       "window": agg.values.maxlen if isinstance(agg.values, deque) else None}
                for name, agg in self.aggregators.items()
            },
        }

    @classmethod
    def from_state_dict(cls, state: dict) -> "StatsTracker":
        """The tracker ``state_dict`` describes (aggregator kinds from ``AGGREGATORS``)."""
        aggregators = {}
        for name, s in state["aggregators"].items():
            kind = AGGREGATORS[s["kind"]]
            agg = kind(s["source"], s["window"]) if kind is RollingMean else kind(s["source"])
            for x in s["values"]:
                agg.push(x)
            aggregators[name] = agg
        tracker = cls(aggregators)
        tracker.episodes = int(state["episodes"])
        return tracker


@dataclass
class EvalReport:
    total_steps: int
    n_episodes: int
    stats: dict
    episodes: list[EpisodeRecord] = field(default_factory=list)

    @property
    def mean_reward(self) -> float:
        return self.stats["mean_reward"]

    @property
    def std_reward(self) -> float:
        return self.stats["std_reward"]

    def format(self) -> str:
        s = self.stats
        line = f"eval @ {self.total_steps} steps: {self.n_episodes} episodes, return {s['mean_reward']:.2f} +- {s['std_reward']:.2f} (min {s['min_reward']:.1f}, max {s['max_reward']:.1f})"
        if "success_rate" in s:
            line += f", success {100 * s['success_rate']:.1f}%"
        return line

    def print(self) -> None:
        print(self.format())
