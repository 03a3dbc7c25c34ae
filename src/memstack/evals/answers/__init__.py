"""``memstack eval answers``: LoCoMo answer quality (the J score, F1, BLEU-1) of a reader model given memstack's
context, the whole conversation, or nothing; model calls cached on disk, an HTML report."""

from memstack.evals.answers.cache import AnswerCache
from memstack.evals.answers.cost import PRICES, estimate
from memstack.evals.answers.metrics import Graded, Scores, bleu1, normalize_answer, score, token_f1
from memstack.evals.answers.report import write_report
from memstack.evals.answers.run import MODES, AnswerRun, Mode, Prepared, prepare, run_answers

__all__ = [
    "MODES",
    "PRICES",
    "AnswerCache",
    "AnswerRun",
    "Graded",
    "Mode",
    "Prepared",
    "Scores",
    "bleu1",
    "estimate",
    "normalize_answer",
    "prepare",
    "run_answers",
    "score",
    "token_f1",
    "write_report",
]
