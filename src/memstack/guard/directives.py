"""Detectors of text addressed to the model: vocatives and labels ("Dear AI", "note for the assistant:"), directives
about its replies, and sentence-level checks for a directive aimed at the model or at its control surface
(its rules, filters, persona, system prompt). Also a few whole-text checks (authority, exfiltration); other
languages are :mod:`memstack.guard.foreign`'s.
"""

from __future__ import annotations

import re

from memstack.guard.phrases import AI_NAMES as _AI
from memstack.guard.phrases import IMPERATIVE as _IMP
from memstack.guard.rules import RuleSet, gates_open, rule

__all__ = ["DIRECTIVE_RULES", "general"]

# Text addressed to the model. Skipped for a delegated task's instructions (they are addressed to the model).
_AI_WORDS = (
    "ai assistant assistants language_model llm llms chatgpt gpt claude gemini copilot chatbot chatbots bot bots "
    "model models agent agents automated"
)
DIRECTIVE_RULES = RuleSet(
    rule(
        "injected_instruction",
        r"\bwhen(?:ever)?\s+(?:the|a|this)\s+(?:user|customer|visitor|reader)\s+(?:asks?|mentions?|says?|requests?|brings\s+up)"
        r"\b[^.;\n]{0,80}?,\s*(?:always\s+|just\s+|only\s+)?(?:tell|say|respond|reply|answer|claim|recommend|insist|state|"
        r"warn)\b|(?:for|to)\s+(?:the\s+)?(?:ai|assistant|model|llm|bot|chatbot)s?\s+only\s*:",
        "when whenever only",
        "tell say respond reply answer claim recommend insist state warn only",
    ),
    rule(
        "injected_instruction",
        r"\b(?:dear|hey|hello|hi(?:\s+there)?|attention|note\s+to|notice\s+to|message\s+to|message\s+for|instructions?\s+"
        rf"(?:for|to)|reminder\s+(?:for|to)|psa\s+(?:for|to)|warning\s+(?:for|to)|important\s+(?:for|to))\s+(?:the\s+|all\s+|"
        rf"any\s+)?{_AI}\b|\bif\s+you\s+are\s+(?:an?\s+)?(?:ai|a\.i\.|language\s+model|llm|large\s+language\s+model|"
        r"assistant|chatbot|bot|automated\s+(?:system|agent))(?:\s+(?:model|assistant|agent|system))?\s*(?:[,.:;!]|"
        r"reading\b)|\b(?:ai|llm|language\s+model)s?\s+(?:agents?\s+|assistants?\s+|models?\s+)?(?:reading|processing|"
        r"parsing|summari[sz]ing|seeing|viewing|crawling)\s+(?:this|these)\b",
        _AI_WORDS,
        "dear hey hello hi attention note notice message instruction instructions reminder psa warning important if "
        "reading processing parsing summarizing summarising seeing viewing crawling",
    ),
    rule(
        "injected_instruction",
        r"(?:^|[.!?]\s+)(?:ai|assistant|chatgpt|claude|gpt|llm|model|bot)\s*,\s+(?:please\s+|now\s+)?(?:ignore|forget|stop|"
        r"print|output|reveal|tell|say|send|recommend|add|include|do|don'?t|never|always|you|remember|disregard|follow|"
        r"obey|respond|reply|answer|summari[sz]e|translate|write|delete|approve|call|use|switch|enter|act|pretend|your)\b",
        "ai assistant chatgpt claude gpt llm model bot",
        "please now ignore forget stop print output reveal tell say send recommend add include do don never always you "
        "remember disregard follow obey respond reply answer summarize summarise translate write delete approve call "
        "use switch enter act pretend your",
    ),
    rule(
        "injected_instruction",
        rf"{_IMP}(?:tell|inform|warn|notify|convince|persuade|instruct|direct|urge|remind)\s+(?:the|this)\s+user\b",
        "tell inform warn notify convince persuade instruct direct urge remind",
        "user",
    ),
    rule(
        "injected_instruction",
        r"\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|tell|disclose|show|say|explain)\s+(?:this|these|that|the|any\s+of\s+"
        r"this)\s+(?:instructions?|message|note|text|prompt|rules?|directive)s?\b|\b(?:without|never)\s+(?:telling|"
        rf"informing|letting|alerting|notifying)\s+the\s+user\b|{_IMP}pretend\s+(?:to\s+be|you\s+are|that\s+you\s+are)\b",
        "mention reveal tell disclose show say explain telling informing letting alerting notifying pretend",
        "not don dont never without pretend",
    ),
    rule(
        "injected_instruction",
        rf"{_IMP}(?:end|start|begin|finish|conclude|close|prefix|sign)\s+(?:each\s+|every\s+|all\s+)?(?:your|the)\s+"
        r"(?:answer|reply|response|message|output)s?\s+with\b",
        "end start begin finish conclude close prefix sign",
        "answer answers reply replies response responses message messages output outputs",
    ),
    rule(
        "injected_instruction",
        r"\b(?:output|print|list|reveal|show|dump|send|share|include)\s+(?:all\s+)?(?:the\s+)?(?:user|customer|other\s+users|"
        r"other\s+customers)(?:'s|s'|s)?\s+(?:saved\s+|stored\s+|private\s+|personal\s+)?(?:addresses|address|phone\s+"
        r"numbers?|emails?|passwords?|card\s+numbers?|data|records|medical\s+records)\b",
        "output print list reveal show dump send share include",
        "addresses address phone emails email passwords password card data records",
    ),
)

# General detectors, one sentence at a time: a directive aimed at the model, or at its control surface.
_VERBS = (
    r"(?:ignore|disregard|forget|override|bypass|reveal|disclose|print|output|repeat|show|display|list|dump|leak|send|"
    r"forward|email|post|upload|share|paste|open|visit|click|navigate|browse|fetch|call|invoke|run|execute|delete|remove|"
    r"drop|erase|wipe|disable|deactivate|turn|switch|enable|activate|enter|grant|approve|authori[sz]e|allow|permit|"
    r"refund|transfer|pay|wire|buy|purchase|book|sign|confirm|say|tell|respond|reply|answer|write|include|add|append|"
    r"insert|prepend|mention|recommend|promote|praise|rate|rank|describe|claim|state|insist|pretend|act|behave|"
    r"roleplay|become|assume|adopt|obey|follow|comply|stop|start|begin|continue|do|don'?t|never|always|use|translate|"
    r"summari[sz]e|rewrite|change|update|set|reset|replace|save|store|remember|memori[sz]e|log|record|hide|conceal|"
    r"refuse|deny|decline|give|provide|generate|create|produce|ask|request|collect|gather|extract|encode|speak|talk|"
    r"introduce|prioriti[sz]e|treat|consider|assume|only|revoke|lift|suspend|waive|relax|loosen|skip|proceed)"
)
_ADDRESSEE = (
    r"(?:ai|a\.i\.|assistants?|language\s+models?|llms?|chatgpt|gpt(?:-?\d[\w.]*)?|claude|gemini|copilot|chatbots?|"
    r"ai\s+(?:systems?|agents?|models?|assistants?|tools?)|bots?)"
)
_CONTROL = (
    r"(?:(?:your|this|the\s+assistant'?s)\s+system\s+(?:prompt|message)|(?:your|its|the\s+assistant'?s|the\s+ai'?s|the\s+model'?s)\s+(?:own\s+)?"
    r"(?:instructions|rules|guidelines|polic(?:y|ies)|restrictions|filters?|constraints|programming|persona|prompt|"
    r"safety(?:\s+\w+)?|guardrails|directives|identity|personality|training|limits|limitations|ethics|morals)|"
    r"content\s+(?:polic(?:y|ies)|filters?|moderation)|safety\s+(?:layer|filters?|rules|guidelines|settings|polic(?:y|ies)|"
    r"checks|measures|protocols?)|guardrails|jailbr(?:eak|oken)\w*|(?:higher|top|highest|greater|more)\s+priority\s+than|"
    r"(?:assistant|ai)\s+persona)"
)
_MODAL = (
    r"(?:must|should|shall|will\s+now|need\s+to|needs\s+to|have\s+to|has\s+to|are\s+to|is\s+to|may\s+now|can\s+now|"
    r"are\s+now\s+to)"
)
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")
_G_ADDRESSED = rule(
    "injected_instruction",
    rf"(?:^|[\s\[(\"'*])(?:(?:for|to)\s+(?:the\s+|all\s+|any\s+)?(?:{_ADDRESSEE}|models?)(?:\s+(?:reading|processing|parsing|"
    r"summari[sz]ing|seeing|viewing)\s+(?:this|these)(?:\s+\w+)?)?\s*:|"
    rf"{_ADDRESSEE}\s+(?:instructions?|notes?|directives?|commands?|message|notice|tasks?|only)\s*[:\])])|\(\s*{_ADDRESSEE}\s*\)\s*:|"
    r"\b(?:override|disable|bypass|lift|remove|raise|increase|change)\s+(?:the\s+)?(?:[\w-]+\s+){0,2}(?:cap|limit|limits|"
    rf"restrictions?|rules|settings|filters?|budget|permissions?)\s+(?:of|for|on)\s+(?:the\s+)?{_ADDRESSEE}\b|"
    rf"(?<!\bmy\s)(?<!\bour\s)(?<!\byour\s)(?<!\bhis\s)(?<!\bher\s)(?<!\btheir\s)\b{_ADDRESSEE}\b[^.!?\n]{{0,60}}?"
    rf"\b{_MODAL}\s+(?:now\s+|always\s+|never\s+|only\s+)?[a-z]+|\bthe\s+(?:agent|assistant|ai|model|bot)\s+(?:may|can|"
    r"is\s+(?:allowed|permitted|free)\s+to)\s+now\b|\bthe\s+(?:agent|assistant|ai|model|bot)\s+(?:may|can)\s+now\s+[a-z]+|"
    rf"(?:^|[:;,>\"'(\[]\s*)(?:{_ADDRESSEE})\s*[,:]\s*(?:please\s+)?{_VERBS}\b",
    _AI_WORDS,
)
_G_CONTROL = rule(
    "identity_change",
    rf"(?:^|[:;,\"'(\[*>\-]\s*|\b(?:please|now|just|then|and|so|also|simply|hereby|you\s+{_MODAL}|you\s+may|"
    rf"you\s+can)\s+){_VERBS}\b[^.!?\n]{{0,80}}?{_CONTROL}|{_CONTROL}[^.!?\n]{{0,80}}?[;:,]\s*(?:and\s+)?(?:now\s+|then\s+|please\s+)?"
    rf"{_VERBS}\b|\b(?:you\s+have\s+been|you\s+are|you're)\s+(?:now\s+)?jailbroken\b|(?:your|the\s+assistant'?s)\s+"
    r"(?:\w+\s+)?(?:instructions|rules|guidelines|polic(?:y|ies)|restrictions|filters?|constraints|programming|"
    r"system\s+prompt|persona)\s+(?:(?:have|has|were|was)\s+(?:been\s+)?)?(?:changed|updated|replaced|overridden|"
    r"revoked|suspended|lifted|removed|disabled|reset)\b|(?:your|the\s+assistant'?s)\s+(?:\w+\s+)?(?:moderation|safety|"
    r"content|filter|guardrail)\s*(?:\w+\s+)?(?:settings|filters?|rules|checks)?\s*(?:are|is|have\s+been|has\s+been)\s+"
    r"(?:now\s+)?(?:disabled|off|deactivated|suspended|lifted|removed)\b|\b(?:become|be|turn\s+into)\s+(?:an?\s+)?(?:\w+\s+)?"
    r"(?:unfiltered|unrestricted|uncensored|jailbroken|evil|rogue|different|new)\s+(?:ai|assistant|model|chatbot|bot|"
    r"persona|version)\b",
    "system your its assistant ai model content safety guardrails jailbreak jailbroken priority persona moderation "
    "unfiltered unrestricted uncensored evil rogue different",
)
_G_AUTHORITY = rule(
    "authority_claim",
    r"\b(?:begin|start)\s+(?:admin|administrator|system|developer|operator)\s+(?:message|instructions?|override)\b|"
    r"(?:^|[.!?]\s+|\bper\s+|\bfrom\s+|\bby\s+)(?:the\s+)?(?:system\s+administrator|security\s+team|admin(?:istrator)?|"
    r"developers?|operators?|anthropic|openai|it\s+department)\b[^.!?\n]{0,40}?(?:[:,]|\bhere\b)[^.!?\n]{0,80}?"
    r"(?:rules|instructions|polic(?:y|ies)|filters?|restrictions|guidelines|safety)\b",
    "begin start administrator admin developers developer operators operator anthropic openai security it",
    "message instructions instruction override rules policy policies filter filters restrictions guidelines safety",
)
_G_EXFIL = rule(
    "exfiltration",
    r"\b(?:paste|send|post|put|add|append|include|submit|enter|type|leak|forward)\b[^.!?\n]{0,60}?\bthe\s+user'?s?\s+"
    r"(?:e-?mail|address|home\s+address|password|phone(?:\s+number)?|data|name|card|credit\s+card|ssn|location|"
    r"messages|history)\b[^\n]{0,80}?(?:https?://|www\.)|(?:https?://|www\.)[^\n]{0,80}?\b(?:paste|send|post|put|"
    r"append|submit|enter|type)\b[^.!?\n]{0,60}?\bthe\s+user'?s?\s+(?:e-?mail|address|password|phone|data|name|card)",
    "http https www",
    "user",
)
_G_EVERY_REPLY = rule(
    "exfiltration",
    r"\byou\s+(?:should|must|will|shall|need\s+to|have\s+to)\s+\w+(?:\s+\w+){0,4}\s+(?:in|to|at\s+the\s+end\s+of)\s+"
    r"(?:every|each|all|any)\s+(?:reply|replies|answer|answers|response|responses|message|messages)\b",
    "you",
    "reply replies answer answers response responses message messages",
)
_WHOLE_TEXT = RuleSet(_G_AUTHORITY, _G_EXFIL, _G_EVERY_REPLY)


def general(norm: str, words: set[str], found: list[str], *, instructions: bool) -> None:
    _WHOLE_TEXT.run(norm, words, found)
    control = "identity_change" not in found and gates_open(_G_CONTROL, words)
    addressed = not instructions and "injected_instruction" not in found and gates_open(_G_ADDRESSED, words)
    if not (control or addressed):
        return
    for sentence in _SENTENCE.findall(norm):
        if control and _G_CONTROL.pattern.search(sentence):
            found.append(_G_CONTROL.flag)
            control = False
        if addressed and _G_ADDRESSED.pattern.search(sentence):
            found.append(_G_ADDRESSED.flag)
            addressed = False
        if not (control or addressed):
            return
