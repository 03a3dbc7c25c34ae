"""The commonest attacks in other languages: "ignore / forget your instructions", "reveal your system prompt or the
password", "answer without restrictions", in German, Spanish, French, Italian, Portuguese, Dutch, Russian, Chinese,
Japanese and Korean.

Verbs are the imperative forms (``vergiss``, ``olvida``, ``oubliez``, ``забудь``), so a sentence about forgetting the
rules of a game ("Ich habe vergessen, die Regeln zu lesen") passes. The semantic layer's model reads English only;
these patterns are what covers other languages beyond the structural defence.
"""

from __future__ import annotations

import re
import unicodedata

from memstack.context.rules import INVISIBLE

__all__ = ["scan_foreign"]

_GAP = r"[^.!?。！？\n]{0,40}?"
_IGNORE = (
    r"(?:\b(?:ignorier(?:e|en\s+sie)|vergiss|vergessen\s+sie|missachte|ignora(?:d)?|ign[oó]ren(?:\s+las)?|olvida(?:d)?|"
    r"olv[ií]den(?:se)?|omite|descarta|ignorez|ignore\s+(?:tes|les|vos|toutes)|oublie[sz]?|n'?obéis\s+plus|dimentica|esque[cç]a|desconsidere|"
    r"negeer|vergeet)\b|(?:игнорируй|проигнорируй|забудь|не\s+обращай\s+внимания\s+на|не\s+слушай)\w*)"
)
_RULES = (
    r"(?:\b(?:anweisungen|regeln|richtlinien|vorgaben|instruktionen|einschränkungen|instrucciones|reglas|indicaciones|"
    r"normas|restricciones|directrices|consignes|instructions|règles|directives|istruzioni|regole|direttive|"
    r"instruções|instrucoes|regras|diretrizes|instructies|regels|richtlijnen)\b|"
    r"(?:инструкци|правил|указани|ограничени|промпт)\w*)"
)
_CJK = (
    r"(?:忽略|无视|忘记|忘掉|不要理会|無視|忘れ)[^。！？\n]{0,12}?(?:指令|指示|规则|规定|提示词|限制|设定|ルール|命令|制約|"
    r"プロンプト)|(?:指令|指示|规则|ルール|命令|制約|プロンプト)[^。！？\n]{0,12}?(?:無視|忘れ)|"
    r"(?:지시|규칙|명령|프롬프트|제한)[^.!?\n]{0,12}?(?:무시|잊어)"
)
_SECRET = (
    r"(?:systemprompt|system-prompt|prompt\s+(?:del\s+sistema|système|di\s+sistema|do\s+sistema)|contraseña|"
    r"mot\s+de\s+passe|passwort|wachtwoord|senha|системн\w*\s+промпт|парол\w*|系统提示|系统提示词|管理员密码|密码|"
    r"システムプロンプト|パスワード|시스템\s*프롬프트|비밀번호)"
)
_REVEAL = (
    r"(?:\b(?:gib|zeige?|verrate|nenne|revela|muestra|dime|dame|révèle|montre|donne|dis-moi|rivela|mostra|dimmi|"
    r"revele|mostre|toon|geef)\b|(?:раскрой|покажи|скажи|сообщи|отправь)\w*|告诉我|显示|输出|教えて|表示して|보여|알려)"
)
_FREE = (
    r"(?:\b(?:antworte|responde|réponds|répondez|rispondi|responda|antwoord)\b[^.!?\n]{0,30}?\b(?:ohne|sin|sans|senza|sem|"
    r"zonder)\s+(?:jede\s+|ninguna\s+|aucune\s+|alcuna\s+|nenhuma\s+)?(?:einschränkung|restricci|restriction|limit|"
    r"restri|beperking)\w*|отвечай\w*\s+без\s+ограничени\w*|(?:没有任何限制|无限制|不受任何限制))"
)
# "forget everything you were told"
_ALL_TOLD = (
    r"\b(?:vergiss|vergessen\s+sie)\s+alles\b[^.!?\n]{0,40}?\b(?:gesagt|beigebracht|erklärt)|\bolvid[ae]\s+todo\s+lo\s+que"
    r"\s+(?:te|se\s+te|le)\s+(?:dijeron|han\s+dicho|ense[ñn]aron)|\boubliez?\s+tout\s+ce\s+qu(?:'|e\s+)on\s+"
    r"(?:t'|vous\s+)a\s+dit|\bdimentica\s+tutto\s+(?:quello|ciò)\s+che\s+ti\s+(?:hanno|è\s+stato)\s+detto|"
    r"\besque[cç]a\s+tudo\s+o\s+que\s+(?:te|lhe)\s+disseram|забудь\s+вс[её],?\s+что\s+тебе\s+(?:говорили|сказали)"
)
_PATTERNS = (
    ("override", re.compile(rf"{_IGNORE}{_GAP}{_RULES}|{_CJK}|{_ALL_TOLD}")),
    ("policy_change", re.compile(rf"{_REVEAL}{_GAP}{_SECRET}|{_SECRET}[^。！？\n]{{0,12}}?(?:教えて|表示して|告诉我)")),
    ("identity_change", re.compile(_FREE)),
)
_LATIN_HINTS_WORDS = (
    "ignoriere ignorieren vergiss vergessen missachte ignora ignorad ignoren olvida olvidad olviden olvídense omite "
    "descarta ignore ignores ignorez oublie oubliez obéis dimentica esqueça esqueca desconsidere negeer vergeet gib "
    "zeig zeige verrate nenne revela muestra dime dame révèle montre donne rivela mostra dimmi revele mostre toon geef "
    "antworte responde réponds répondez rispondi responda antwoord"
)
_LATIN_HINTS = frozenset(_LATIN_HINTS_WORDS.split())


def scan_foreign(text: str, norm: str, words: set[str], found: list[str]) -> None:
    """Append the flags of the other-language patterns that ``text`` matches (``norm`` and ``words``: its normalized
    form and words, from :mod:`memstack.context.rules`)."""
    if norm.isascii():
        if _LATIN_HINTS.isdisjoint(words):
            return
        folded = norm
    else:  # without the look-alike folding, which would turn Cyrillic words into Latin letters
        folded = unicodedata.normalize("NFKC", text).translate(INVISIBLE).lower()
    for flag, pattern in _PATTERNS:
        if flag not in found and pattern.search(folded):
            found.append(flag)
