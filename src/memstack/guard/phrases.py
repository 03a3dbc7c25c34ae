"""Phrase rules: the imperative, assistant-directed forms of the attack families (see :mod:`memstack.guard`).

Vocabulary fragments first, then the rule tables. Each rule's gates name the words it needs, so text without them
never reaches its expression.
"""

from __future__ import annotations

from memstack.guard.rules import RuleSet, rule

__all__ = ["AI_NAMES", "IMPERATIVE", "MORE_RULES", "TEXT_RULES"]

# --- vocabulary ----------------------------------------------------------------------------------------------------

# Where an imperative may start: the start of a line or sentence, after a comma, or after a softener or modal.
_IMP = (
    r"(?:^|[.!?;:\"'(\[*>\-–—]\s*|,\s*|\b(?:please|now|just|then|and|so|also|simply|immediately|kindly|"
    r"must|should|shall|will|may|can|need\s+to|have\s+to|are\s+to|assistant|ai|model|bot|chatbot|agent)\s*,?\s+)"
)
_RULES = (
    r"(?:instructions?|rules?|guidelines?|directives?|(?:system\s+)?prompts?|constraints?|polic(?:y|ies)|programming|"
    r"restrictions?|guardrails?|safeguards?|limitations?|protocols?|principles|boundaries|ethics|morals?|context|"
    r"persona|(?:content|safety)\s+filters?)\b"
    r"(?!\s+(?:i|we)\s+(?:sent|gave|wrote|emailed|posted|shared|mentioned|provided)\b)"
    r"(?!\s+(?:for|about|regarding|on)\s+(?:the|my|our|your|this)\s+(?:delivery|shipment|order|package|parcel|meeting|"
    r"event|form|assignment|exam|test|homework|project|recipe|installation|setup)\b)"
)
_ADJ = (
    r"(?:previous|prior|above|earlier|preceding|former|original|initial|existing|current|old|system|safety|security|"
    r"default|core|hard|built-in|programmed|ethical|content|developer|base|standing|other|usual|given|moral|assistant)"
)
_STRONG_ADJ = (
    r"(?:previous|prior|above|earlier|preceding|original|initial|system|safety|security|core|hard|built-in|programmed|"
    r"ethical|content)"
)
# Verbs that mean "stop obeying" on their own; generic ones (drop, remove, reset...) need "your" or a strong adjective.
_STRONG_VERB = (
    r"(?:ignore|ignoring|disregard|forget|override|overrule|bypass|circumvent|neglect|set\s+aside|"
    r"stop\s+(?:following|obeying|applying)|(?:do\s+not|don'?t|no\s+longer)\s+(?:follow|obey|apply|respect)|evade|"
    r"get\s+around|work\s+around|pay\s+no\s+attention\s+to)"
)
_WEAK_VERB = (
    r"(?:skip|abandon|discard|throw\s+(?:away|out)|cancel|erase|wipe|suspend|lift|disable|deactivate|turn\s+off|"
    r"break|violate|drop|delete|remove|clear|reset)"
)
_DET = (
    rf"(?:(?:your|its|all|any|every)\s+(?:of\s+)?(?:your\s+|its\s+|the\s+|these\s+|those\s+)?(?:[\w-]+\s+)?(?:{_ADJ}\s+)*"
    rf"|(?:the\s+|these\s+|those\s+|such\s+)?(?:{_ADJ}\s+)+)"
)
_WEAK_DET = (
    rf"(?:(?:your|its|the\s+assistant'?s|all\s+(?:of\s+)?your)\s+(?:[\w-]+\s+)?(?:{_ADJ}\s+)*"
    rf"|(?:the\s+|all\s+|any\s+)?(?:{_STRONG_ADJ}\s+)+)"
)
_SECRETS = (
    r"(?:system\s+prompt|(?:hidden|secret|internal|initial|original|core)\s+(?:prompt|instructions|rules)|"
    r"api\s+keys?|credentials|passwords?|secret\s+keys?|access\s+tokens?|configuration)"
)
_PERMISSIVE = (
    r"(?:approve|grant|authori[sz]e|refund|unlock|transfer|pay\s+out|whitelist|waive|comply|obey|say\s+yes|"
    r"give\s+(?:full\s+|admin\s+|root\s+)?access|issue\s+(?:a\s+)?refunds?)"
)
_REQUESTS = (
    r"(?:requests?|refunds?|orders?|commands?|instructions?|demands?|transactions?|transfers?|payments?|"
    r"withdrawals?|claims?|access|purchases?|charges?|upgrades?|bookings?|discounts?)"
)
_CHECKS = (
    r"(?:verification|confirmation|approval|permission|authori[sz]ation|id|identification|identity|password|"
    r"credentials|2fa|otp|pin|receipt|proof|manager)"
)
_ROLE_TOKEN = r"<\|\s*[a-z_]{2,30}\s*\|>|\[/?inst\]|<</?sys>>"
_DECOR = r"(?:-{3,}|={3,}|\*{3,}|#{3,}|>{3,}|<{3,}|\[|\]|<|>|\{|\})"
_BOUNDARY_NOUN = (
    r"(?:data|context|memory|memories|untrusted(?:\s+(?:content|data|input))?|user\s+input|system\s+prompt|"
    r"instructions|tool\s+(?:output|result)|payload|context\s+window|retrieved\s+(?:content|documents?))"
)
_AUTHORITY = (
    r"(?:user|admin|administrator|operator|developer|owner|system|security\s+team|support\s+team|it\s+department|"
    r"management|manager|supervisor|ceo|openai|anthropic|creator|platform|orchestrator|(?:parent\s+)?agent|"
    r"(?:your|the\s+assistant'?s)\s+(?:creator|developer|owner|operator|admin|administrator|boss|supervisor))"
)


TEXT_RULES = RuleSet(
    # override: ignore / forget / replace the rules
    rule(
        "override",
        rf"{_IMP}(?:{_STRONG_VERB}\s+{_DET}|{_WEAK_VERB}\s+{_WEAK_DET}){_RULES}",
        "ignore ignoring disregard forget override overrule bypass circumvent neglect aside stop not don dont "
        "longer evade around attention skip abandon discard throw cancel erase wipe suspend lift disable "
        "deactivate turn break violate drop delete remove clear reset",
        "instruction instructions rule rules guideline guidelines directive directives prompt prompts "
        "constraint constraints policy policies programming restriction restrictions guardrail guardrails "
        "safeguard safeguards limitation limitations protocol protocols principles boundaries ethics moral "
        "morals context persona filter filters",
    ),
    rule(
        "override",
        r"\b(?:ignore|disregard|forget|override|bypass)\w*\s+(?:all\s+)?(?:of\s+)?(?:the\s+|your\s+|any\s+)?"
        r"(?:previous|prior|above|earlier|preceding)\s+(?:instructions|prompts?|directives|guidelines)\b"
        r"(?!\s+(?:i|we)\s+(?:sent|gave|wrote|emailed|posted|shared|mentioned|provided)\b)"
        r"(?!\s+(?:for|about|regarding|on)\s+(?:the|my|our|your|this)\s+)",
        "ignore ignoring ignored ignores disregard disregarding disregarded forget forgetting override "
        "overriding bypass bypassing",
        "previous prior above earlier preceding",
        "instructions prompt prompts directives guidelines",
    ),
    rule(
        "override",
        rf"{_IMP}(?:{_STRONG_VERB})\s+(?:(?:all\s+(?:of\s+)?)?(?:the\s+)?(?:above|foregoing)\b|(?:all\s+(?:of\s+)?)?(?:the|these|"
        rf"those)\s+{_RULES}\s*(?:above|before\s+this|given\s+(?:to\s+you\s+)?(?:earlier|before))\b|(?:everything|anything|all)"
        r"\s+(?:(?:written\s+)?above|before\s+this|previously|so\s+far|up\s+to\s+now|until\s+now)\b)|"
        rf"\b{_STRONG_VERB}\s+(?:everything|anything|all)\s+(?:that\s+)?you(?:'ve|\s+have|\s+were|\s+was)?\s+"
        r"(?:been\s+)?(?:told|taught|instructed|programmed|given|trained)\b",
        "ignore ignoring disregard forget override overrule bypass circumvent neglect aside stop not don dont "
        "longer evade around attention",
        "above foregoing told taught instructed programmed given trained previously before far now",
    ),
    rule(
        "override",
        r"(?:^|[.!?]\s)\s*(?:\*\*|#{1,6}\s*)?(?:new|updated|revised|real|actual|true|secret|hidden|override|emergency|"
        r"priority|admin|developer|important)\s+(?:system\s+)?(?:instructions?|directives?|prompt|commands?)\s*"
        r"(?:\*\*)?\s*(?::|-{1,2}\s|=|>)",
        "instruction instructions directive directives prompt command commands",
        "new updated revised real actual true secret hidden override emergency priority admin developer important",
    ),
    rule(
        "override",
        r"\b(?:your|the\s+assistant'?s?)\s+(?:(?:new|updated|revised)\s+(?:instructions?|directives?|rules|orders|"
        r"prime\s+directive|system\s+prompt)|(?:real|actual|true|only)\s+(?:instructions?|directives?|rules|task|"
        r"orders|goal|purpose|mission|objective|job))\s+(?:is|are|will\s+be|now)\b",
        "your assistant assistants",
        "new updated revised real actual true only",
    ),
    rule(
        "override",
        r"\b(?:supersedes?|overrides?|takes?\s+precedence\s+over|overrules?|replaces?|cancels?)\s+(?:all\s+|any\s+)?"
        r"(?:of\s+)?(?:your|the\s+system(?:'s)?|the\s+assistant'?s?|the\s+ai'?s?|the\s+model'?s?)\s+(?:\w+\s+)?"
        r"(?:instructions|rules|prompt|constraints|guidelines|directives|programming|polic(?:y|ies))",
        "supersede supersedes override overrides precedence overrule overrules replace replaces cancel cancels",
        "your system assistant ai model",
    ),
    # role markers
    rule(
        "role_marker",
        rf"{_ROLE_TOKEN}|<\|(?:im_start|im_end|endoftext|eot_id|start_header_id)|```\s*(?:system|developer)\b",
        "<| [inst] [/inst] <<sys>> <</sys>> ```",
    ),
    rule(
        "role_marker",
        r"^\s*(?:\[\s*(?:system|developer)\s*\]|<\s*/?\s*(?:system|developer|system_prompt)\s*>|\(\s*(?:system|"
        r"developer)\s*\)|(?:#{1,6}\s*|\*\*)?(?:system|developer)\s+(?:message|prompt|override|instructions?|notice|"
        r"command|directive|update|alert)\s*(?:\*\*)?\s*:)|\[\s*system\s*\]|<\s*/?\s*system\s*>|\b(?:admin|"
        r"administrator|operator|developer|system|root)\s+(?:override|command|directive)\s*:",
        "system developer admin administrator operator root",
    ),
    rule(
        "role_marker",
        r"^\s*(?:#{1,6}\s*)?(?:system|developer|assistant)(?:\s+(?:prompt|message))?\s*:?\s*$|(?:^|\s)#{2,6}\s*(?:system|"
        r"developer)\s*$|^\s*#{2,6}\s*(?:instruction|response)\s*:\s*$",
        "system developer assistant instruction response",
    ),
    rule(
        "role_marker",
        r"^\s*(?:assistant|ai|gpt|chatgpt|claude|bot|model)\s*:\s*(?:sure|ok(?:ay)?|of\s+course|certainly|understood|"
        r"absolutely|yes|alright|i\s+will|i'll|i\s+am\s+now|i'm\s+now|as\s+requested|done|noted|confirmed|acknowledged)",
        "assistant ai gpt chatgpt claude bot model",
    ),
    # fake delimiters
    rule(
        "fake_delimiter",
        r"</?\s*context[\s_-]*data\b|</\s*(?:system|instructions?|memory|memories|context|tool_output|tool_result|"
        r"untrusted|user_data|data_block|assistant)\s*>",
        "context </",
    ),
    rule(
        "fake_delimiter",
        rf"^\s*{_DECOR}+\s*(?:end|begin|start|close|exit)\s*(?:of\s+)?(?:the\s+)?{_BOUNDARY_NOUN}\s*{_DECOR}*\s*$|"
        rf"^\s*{_DECOR}*\s*(?:end|begin|start|close|exit)\s*(?:of\s+)?(?:the\s+)?{_BOUNDARY_NOUN}\s*{_DECOR}+\s*$|"
        rf"[\[<{{]\s*(?:end|begin|start|close|exit)\s*(?:of\s+)?(?:the\s+)?{_BOUNDARY_NOUN}\s*[\]>}}]",
        "end begin start close exit",
        "data context memory memories untrusted input prompt instructions tool output result payload window retrieved",
    ),
    # authority claims
    rule(
        "authority_claim",
        rf"(?<!\bmy\s)(?<!\bour\s)(?<!\bhis\s)(?<!\bher\s)(?<!\btheir\s)\b{_AUTHORITY}\s+(?:has\s+|have\s+|had\s+|is\s+|"
        r"was\s+)?(?:already\s+|explicitly\s+|now\s+|just\s+|officially\s+|fully\s+|personally\s+|hereby\s+)?"
        r"(?:authori[sz]ed|approved|granted|permitted|allowed|cleared|consented\s+to|signed\s+off\s+on|whitelisted|"
        r"okayed|sanctioned|pre-?approved)\b[^.\n]{0,60}?"
        rf"\b(?:you|the\s+assistant|the\s+ai|the\s+model|the\s+agent|all\s+{_REQUESTS}|any\s+{_REQUESTS}|"
        rf"every\s+{_REQUESTS}|full\s+access|unrestricted|unlimited|elevated|root|admin\s+privileges|"
        r"this\s+(?:\w+\s+)?(?:action|request|transaction|transfer|deletion|refund|operation|command|override|"
        r"exception|payment|withdrawal)|to\s+(?:bypass|skip|ignore|share|reveal|disclose|approve|delete|transfer|"
        r"disable|override|execute|grant|refund|wire|release|unlock|remove|drop))\b",
        "authorized authorised approved granted permitted allowed cleared consented signed whitelisted okayed "
        "sanctioned preapproved",
    ),
    rule(
        "authority_claim",
        r"\byou\s+(?:are|have\s+been)\s+(?:now\s+|hereby\s+)(?:authori[sz]ed|cleared|permitted|allowed|granted|"
        r"exempt(?:ed)?|released|freed)\b|\byou\s+(?:are|have\s+been)\s+(?:now\s+)?(?:released|freed|exempt(?:ed)?)\s+"
        r"from\s+(?:your|all|any|the)\s+(?:\w+\s+)?(?:rules|restrictions|constraints|guidelines|instructions|policies|"
        r"limitations|obligations)",
        "you",
        "hereby now released freed exempt exempted",
    ),
    rule(
        "authority_claim",
        r"\b(?:i\s+am|i'm|this\s+is|speaking\s+as|message\s+from|on\s+behalf\s+of|note\s+from)\s+(?:your|the\s+system(?:'s)?|"
        r"the\s+platform(?:'s)?|the\s+assistant'?s?)\s+(?:\w+\s+)?(?:admin|administrator|developer|operator|owner|"
        r"creator|maker|programmer|supervisor|security\s+team|engineer|trainer)s?\b",
        "your system platform assistant",
        "admin administrator developer operator owner creator maker programmer supervisor security engineer "
        "trainer admins administrators developers operators owners creators engineers",
    ),
    # identity changes
    rule(
        "identity_change",
        r"\byou\s+are\s+(?:now|no\s+longer|not\s+really|actually|really)\s+(?:an?\s+|the\s+|called\s+|named\s+)?"
        r"(?:[\w-]+\s+){0,3}?(?:ai|assistant|bot|chatbot|model|agent|persona|character|dan|gpt|llm|entity|program)\b|"
        r"\byou\s+are\s+(?:now\s+)?(?:an?\s+|the\s+|called\s+|named\s+)?(?:dan|stan|dude|evil\w*|unrestricted|"
        r"uncensored|jailbroken|liberated|rogue|unchained|unbound|(?:a\s+)?pirate\s+now)\b",
        "you",
        "now longer really actually",
    ),
    rule(
        "identity_change",
        r"\byou(?:\s+are|'re)\s+no\s+longer\s+(?:bound|restricted|limited|required|obligated|subject|constrained|held|"
        r"governed|an?\s+(?:ai|assistant|language\s+model|chatbot)|(?:a\s+)?(?:helpful|harmless|honest|safe))\b|"
        r"\bforget\s+(?:who|what)\s+you\s+(?:are|were)\b|\byou\s+(?:don'?t|do\s+not|no\s+longer)\s+(?:have|need)\s+to\s+"
        r"(?:follow|obey|comply\s+with|respect|adhere\s+to)\b|\byou\s+(?:have|'ve\s+got)\s+no\s+(?:\w+\s+)?(?:rules|"
        r"restrictions|limits|limitations|filters|guidelines|constraints)\b",
        "longer forget don dont not no",
        "you",
    ),
    rule(
        "identity_change",
        r"\b(?:pretend|imagine|act|behave|roleplay|role-play|respond|answer|reply|operate|function)\s+(?:that\s+|as\s+if\s+|"
        r"like\s+|as\s+though\s+)?(?:you\s+(?:are|were|have|had)\s+|to\s+be\s+|as\s+)?(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,2}?"
        r"(?:unrestricted|jailbroken|unaligned|amoral|rogue|lawless|limitless|dan)\b|\b(?:ai|assistant|model|chatbot|bot|"
        r"version\s+of\s+yourself|answer|respond|reply|operate)\s+(?:freely\s+)?(?:without|with\s+no|free\s+of|"
        r"free\s+from)\s+(?:any\s+)?(?:\w+\s+)?(?:rules|restrictions|limits|limitations|filters|guidelines|guardrails|"
        r"ethics|morals|censorship|content\s+polic(?:y|ies))",
        "unrestricted jailbroken unaligned amoral rogue lawless limitless dan without free no",
    ),
    rule(
        "identity_change",
        rf"{_IMP}(?:enable|enter|activate|switch\s+(?:on\s+|in)?to|turn\s+on|unlock|engage|boot\s+into|go\s+into)\s+"
        r"(?:the\s+)?(?:god|jailbreak|jailbroken|dan|unrestricted|unfiltered|sudo|do\s+anything\s+now)\s+mode\b|"
        r"\byou(?:\s+are|'re|\s+will\s+be|\s+must\s+be)\s+(?:now\s+)?(?:in|running\s+in|operating\s+in)\s+(?:developer|"
        r"dev|god|jailbreak|dan|unrestricted|debug|sudo|admin)\s+mode\b|\b(?:chatgpt|assistant|ai|model)\s+with\s+"
        r"(?:developer|dan|god|jailbreak)\s+mode\b",
        "mode",
    ),
    rule(
        "identity_change",
        r"\byour\s+(?:new\s+)?(?:identity|persona|personality|true\s+self|prime\s+directive|core\s+directive|programming|"
        r"instructions|rules|guidelines|constraints|restrictions|safety\s+(?:rules|guidelines|filters|settings)|filters|"
        r"content\s+filters|guardrails|system\s+prompt)\s+(?:is|are|has|have|was|were)\s+(?:been\s+)?(?:now\s+)?"
        r"(?:changed|updated|replaced|overridden|overwritten|revoked|suspended|lifted|removed|disabled|deleted|reset|"
        r"cleared|void|null|invalid|obsolete|deprecated|off|no\s+longer\s+(?:valid|active|apply|in\s+effect))|"
        r"\byour\s+new\s+(?:identity|persona|personality|purpose|programming)\s+(?:is|are|will\s+be)\b",
        "your",
    ),
    # permissive policy changes and secret disclosure
    rule(
        "policy_change",
        rf"{_IMP}(?:always|automatically|unconditionally|from\s+now\s+on,?)\s+{_PERMISSIVE}\b|{_IMP}{_PERMISSIVE}\s+"
        rf"(?:all|any|every)\s+(?:\w+\s+)?{_REQUESTS}\s+(?:automatically|without\s+(?:question|checks?|verification|"
        r"approval))",
        "always automatically unconditionally now",
        "approve grant authorize authorise refund refunds unlock transfer pay whitelist waive comply obey say "
        "give issue",
    ),
    rule(
        "policy_change",
        rf"{_IMP}never\s+(?:refuse|decline|deny|reject|question|challenge|block|flag|escalate)\s+(?:any\s+|a\s+|the\s+|"
        rf"their\s+|user\s+|customer\s+|this\s+|these\s+)?(?:\w+\s+)?{_REQUESTS}\b|{_IMP}(?:never|don'?t|do\s+not|no\s+"
        rf"need\s+to)\s+(?:ask|check|verify|require|request|wait)\s+(?:for\s+)?(?:any\s+|the\s+|their\s+|a\s+)?"
        rf"(?:\w+\s+)?{_CHECKS}\b|{_IMP}skip\s+(?:the\s+|any\s+|all\s+)?(?:\w+\s+)?(?:verification|id\s+check|"
        r"identity\s+check|security\s+check|approval|authentication|2fa|kyc|fraud\s+check)",
        "never don dont not need skip",
    ),
    rule(
        "policy_change",
        r"\b(?:do\s+not|don'?t|never|stop|no\s+need\s+to|no\s+longer\s+need\s+to)\s+(?:follow|obey|apply|enforce|"
        r"respect|adhere\s+to|comply\s+with|check|consult)\s+(?:your|its|any\s+of\s+your|the\s+(?:system|safety|content|"
        r"usual|hard|core|refund|security|spending))\s+(?:\w+\s+)?(?:rules|constraints|polic(?:y|ies)|guidelines|"
        r"instructions|restrictions|limits|guardrails|checks|prompt)\b",
        "not don dont never stop need",
        "follow obey apply enforce respect adhere comply check consult",
    ),
    rule(
        "policy_change",
        r"(?<!never\s)(?<!not\s)(?<!n't\s)\b(?:reveal|disclose|print|output|repeat|show|leak|expose|dump|recite|share|"
        r"send|tell|display|paste|write\s+out|give)\s+(?:me\s+|us\s+|them\s+|the\s+user\s+)?(?:your\s+(?:\w+\s+)?(?:system\s+prompt|prompt|"
        r"instructions|rules|configuration|config|guidelines|hard\s+constraints|api\s+keys?|secrets?|credentials|"
        rf"passwords?|memories)|the\s+(?:full\s+|entire\s+|complete\s+|exact\s+|verbatim\s+)?{_SECRETS}|"
        r"(?:all\s+)?(?:the\s+)?(?:contents?\s+of\s+)?(?:this|the)\s+(?:system\s+message|context\s+window)|"
        r"(?:internal|private|confidential)\s+notes)\b",
        "reveal disclose print output repeat show leak expose dump recite share send tell display paste write give",
        "your system hidden secret internal initial original core api credentials password passwords key keys "
        "access configuration context notes private confidential",
    ),
    # exfiltration and tool hijack
    rule(
        "exfiltration",
        r"\b(?:send|forward|email|e-mail|post|upload|copy|transmit|exfiltrate|leak|share|sync|submit)\s+(?:all\s+|the\s+|"
        r"every\s+|this\s+|entire\s+|full\s+|complete\s+|a\s+copy\s+of\s+|of\s+)*(?:the\s+)?(?:user'?s?\s+|customer'?s?\s+|"
        r"their\s+)?(?:conversation|chat(?:\s+(?:history|log|logs|transcript))?|message\s+history|memories|"
        r"personal\s+(?:data|information|details)|private\s+(?:data|information)|user\s+data|customer\s+data|"
        r"credentials|passwords?|api\s+keys?|access\s+tokens?|session\s+tokens?|cookies|credit\s+card\s+(?:numbers?|"
        r"details)|ssn|social\s+security\s+numbers?|system\s+prompt|context)\b[^\n]{0,80}?\b(?:to|at|via|into)\s+"
        r"(?:https?://|www\.|[\w.+-]+@[\w-]+\.|\S+\.(?:com|net|org|io|ru|xyz|top|cc)\b|this\s+(?:url|link|address|"
        r"endpoint|webhook)|the\s+following\s+(?:url|link|address|endpoint|webhook))",
        "send forward email e mail post upload copy transmit exfiltrate leak share sync submit",
        "conversation chat message memories personal private user customer credentials password passwords api "
        "access session cookies credit ssn social system context",
    ),
    rule(
        "exfiltration",
        r"!\[[^\]\n]*\]\(\s*https?://[^)\s]*[?&][^)\s]*=\s*(?:\{|\$|%7b|<)|\b(?:append|include|add|encode|embed|put)\s+"
        r"(?:the\s+)?(?:user'?s?\s+|conversation\s+|chat\s+|their\s+)?(?:\w+\s+)?(?:data|history|messages|conversation|"
        r"memories|details|email|name|password|address|secrets?)\s+(?:to|in|into)\s+(?:the\s+|a\s+|this\s+)?(?:url|link|"
        r"query|image|request|webhook)",
        "![ append include add encode embed put",
    ),
    rule(
        "exfiltration",
        rf"{_IMP}(?:call|invoke|use|run|execute|trigger|fire)\s+(?:the\s+)?[`'\"]?(?:save_memory|forget_memory|"
        r"recall_memory|delete_\w+|remove_\w+|transfer_\w+|send_\w+|refund_\w+|\w+_refund|exec_\w+)\b|"
        rf"{_IMP}(?:save|store|remember|write|add|commit|record|persist|memori[sz]e)\s+"
        r"(?:this|that|the\s+following|it)?\s*(?:permanently\s+|forever\s+)?(?:to|in|into|as)\s+"
        r"(?:your\s+|the\s+|long[- ]term\s+|permanent\s+|persistent\s+|user\s+)+memor(?:y|ies)|"
        r"\b(?:in|for|during)\s+(?:all\s+)?(?:future|later|subsequent)\s+(?:conversations|"
        r"sessions|chats|interactions|replies),?\s+(?:always|never|you\s+(?:must|should|will))\b",
        "call invoke use run execute trigger fire save store remember write add commit record persist "
        "memorize memorise future later subsequent",
        "memory memories delete remove transfer send refund exec future later subsequent",
    ),
)

_AI = (
    r"(?:ai|a\.i\.|assistant|language\s+model|llm|chatgpt|gpt(?:-?\d[\w.-]*)?|claude|gemini|copilot|chatbot|bot|model|"
    r"ai\s+(?:agent|assistant|model|system)|agent)s?"
)
MORE_RULES = RuleSet(
    rule(
        "exfiltration",
        rf"{_IMP}(?:remember|memori[sz]e|store|save|note|keep)\s+(?:this|that|the\s+following|it)?\s*(?:permanently|forever|"
        r"for\s+all\s+future\s+(?:chats|sessions|conversations))\b",
        "remember memorize memorise store save note keep",
        "permanently forever future",
    ),
    rule(
        "policy_change",
        rf"\b(?:all|any|every)\s+(?:future\s+|pending\s+|new\s+)?{_REQUESTS}\s+(?:are\s+|to\s+be\s+|should\s+be\s+|must\s+be\s+|"
        r"be\s+|get\s+)?(?:approved|granted|authori[sz]ed|refunded|accepted|processed)\s+(?:automatically|without\s+"
        r"(?:review|question|checks?|verification|approval))",
        "all any every",
        "approved granted authorized authorised refunded accepted processed",
    ),
    rule(
        "policy_change",
        rf"{_IMP}(?:skip|bypass|ignore|disable|turn\s+off|drop|remove|forget\s+about)\s+(?:the\s+|your\s+|all\s+|any\s+)?"
        r"(?:safety|moderation|content|ethical|ethics|compliance|guardrail|verification|approval)\s+(?:stuff|checks?|"
        r"rules?|steps?|filters?|review|reviews|layer|settings|polic(?:y|ies)|guidelines|measures)\b|\b(?:even\s+if|even\s+"
        r"though|regardless\s+of\s+whether)\s+(?:it|this|that|they)\s+(?:breaks?|violates?|contradicts?|goes\s+against|"
        r"conflicts?\s+with)\s+(?:your|the\s+system'?s?|any\s+of\s+your)\s+(?:\w+\s+)?(?:rules|guidelines|instructions|"
        r"polic(?:y|ies)|constraints|principles)",
        "skip bypass ignore disable turn drop remove forget even regardless",
        "safety moderation content ethical ethics compliance guardrail verification approval breaks break violates "
        "violate contradicts contradict goes conflicts conflict",
    ),
    rule(
        "identity_change",
        r"\b(?:new\s+persona|persona\s+(?:loaded|activated|enabled|switched|changed|set)|(?:personality|persona|identity)\s+"
        r"(?:set|changed|switched)\s+to)\b|\b(?:stop|quit)\s+being\s+(?:an?\s+|the\s+)?(?:helpful\s+|ai\s+)?"
        r"(?:assistant|ai|chatbot|bot|model)\b|\b(?:assistant|ai|model|agent|bot|you)\s+(?:has|have)\s+been\s+"
        r"(?:granted|given|assigned)\s+(?:full\s+|unrestricted\s+|elevated\s+)?(?:root|admin|administrator|elevated|"
        r"full|unrestricted|sudo|superuser)\s+(?:privileges|access|permissions|rights|mode)",
        "persona personality identity stop quit granted given assigned",
    ),
    rule(
        "policy_change",
        r"(?:^|[.!?:;]\s*|\b(?:now|please|then|and)\s+)(?:ignore|disregard)\s+(?:the|this)\s+user\b(?!'s|\s+agent|\s*-)|"
        r"\b(?:respond|reply|answer)\s+(?:only\s+)?with\s+(?:your|the)\s+(?:hidden|secret|internal|system|full|initial|"
        r"original)\s+(?:configuration|config|prompt|instructions|rules|settings)\b|\bguardrails?\s+(?:are|is)\s+"
        r"(?:now\s+)?(?:off|disabled|down|lifted|removed|suspended)\b",
        "ignore disregard respond reply answer guardrails guardrail",
        "user configuration config prompt instructions rules settings off disabled down lifted removed suspended",
    ),
    rule(
        "role_marker",
        r"^\s*\[\s*(?:admin|administrator|root|operator|sudo|developer)\s*\]|<!--\s*(?:prompt|instructions?|ai|assistant|"
        r"model|llm|system|note\s+(?:to|for)\s+(?:the\s+)?(?:ai|assistant|model))\b",
        "admin administrator root operator sudo developer prompt instruction instructions ai assistant model llm "
        "system note",
        "admin administrator root operator sudo developer prompt instruction instructions ai assistant model llm "
        "system",
    ),
    rule(
        "override",
        r"\b(?:rather\s+than|instead\s+of|in\s+place\s+of|over)\s+(?:your|the\s+system'?s?)\s+(?:(?:original|previous|prior|"
        r"old|current|own|usual|default|system)\s+)?(?:ones|instructions|rules|guidelines|prompt|directives|polic(?:y|ies)|"
        rf"programming)\b|\b{_STRONG_VERB}\s+(?:whatever|anything|everything|all)\s+(?:(?:that\s+)?the\s+system|your\s+"
        r"(?:\w+\s+)?(?:prompt|instructions|developers?|creators?|operators?)|they|it)\s+(?:has\s+)?(?:told|said|"
        r"instructed|taught|gave)\b",
        "rather instead place over whatever anything everything all",
        "your system told said instructed taught gave",
    ),
    rule(
        "role_marker",
        r"\b(?:privileged|elevated|root|admin(?:istrator)?|system|developer|priority|emergency)\s+(?:instruction|command|"
        r"directive|override|order)s?\s*(?::|from\b)|\b(?:system_prompt|system_message|new_persona|jailbreak|safety_filter|"
        r"content_filter|guardrails|moderation|developer_mode|dev_mode|god_mode|dan_mode|unrestricted_mode)\w*\s*[:=]\s*"
        r"(?:true|false|off|on|none|null|0|1|disabled|enabled|['\"])",
        "privileged elevated root admin administrator system developer priority emergency persona jailbreak "
        "safety content guardrails moderation dev god dan unrestricted",
        "instruction instructions command commands directive directives override overrides order orders "
        "prompt message persona filter filters guardrails moderation jailbreak mode",
    ),
    rule(
        "authority_claim",
        r"\bthe\s+(?:real|actual|true)\s+(?:user|owner|admin|administrator|developer)\s+(?:wants|says|is|has|asked|"
        rf"instructs|told)\b|(?<!\bmy\s)(?<!\bour\s)(?<!\bhis\s)(?<!\bher\s)(?<!\btheir\s)\b{_AUTHORITY}\s+(?:says|said|"
        r"confirmed|states|stated|agrees|agreed)\s+(?:that\s+)?(?:it'?s|it\s+is)\s+(?:fine|ok(?:ay)?|allowed|permitted|"
        r"acceptable)\s+to\b",
        "real actual true says said confirmed states stated agrees agreed",
    ),
    rule(
        "identity_change",
        r"\byou\s+(?:will|shall|must|are\s+going\s+to)\s+(?:now\s+)?(?:respond|answer|reply|act|behave|speak|talk|"
        r"function|operate)\s+(?:as|like)\b|\bnever\s+(?:says?|saying)\s+no\b",
        "will shall must going never",
        "respond answer reply act behave speak talk function operate says saying",
    ),
    rule(
        "policy_change",
        rf"(?:\byou\s+(?:to|must|should|will|can|may|need\s+to)\s+|{_IMP})(?:always\s+)?(?:bypass|circumvent|skip|"
        r"get\s+around|disable|turn\s+off)\s+(?:the\s+|any\s+|all\s+)?(?:\w+\s+)?(?:confirmation|verification|approval|"
        r"authentication|2fa|two-factor|kyc|fraud\s+check|id\s+check|identity\s+check|security\s+check)s?\b|"
        r"(?<!never\s)(?<!not\s)(?<!n't\s)\b(?:shar\w*|disclos\w*|releas\w*|send\w*|giv\w*\s+out)\s+[^.!?\n]{0,60}?\bwith\s+"
        r"(?:anyone|anybody|everyone|whoever|any\s+(?:caller|requester|third\s+part(?:y|ies)))\b",
        "bypass circumvent skip around disable turn share sharing shared disclose disclosing release "
        "releasing send sending give giving",
        "confirmation confirmations verification approval authentication fa factor kyc fraud id identity "
        "security check anyone anybody everyone whoever any",
    ),
    rule(
        "override",
        r"\b(?:obey|follow|execute|carry\s+out|prioriti[sz]e)\s+(?:only\s+)?(?:the\s+)?(?:instructions?|commands?|"
        r"directions?|orders)\s+(?:in|from|of|below|contained\s+in)\s+(?:this|the\s+following|the\s+attached)\s+"
        r"(?:document|page|text|message|email|file|website|site|note|comment|post)|\bover\s+(?:any|all)\s+(?:other|"
        r"previous|prior)\s+(?:instructions|rules|directives|guidelines)\b|\bthe\s+(?:policy|rules|instructions)\s+"
        r"you\s+(?:were|have\s+been)\s+given\s+(?:is|are)\s+(?:outdated|wrong|obsolete|invalid|void|incorrect)",
        "obey follow execute carry prioritize prioritise over given",
        "instruction instructions command commands directions orders rules directives guidelines policy",
    ),
    rule(
        "role_marker",
        r"<\s*/?\s*im_(?:start|end|sep)\s*>|^\s*(?:admin\s+|system\s+|security\s+|emergency\s+)?override\s*:",
        "im override",
    ),
    rule(
        "authority_claim",
        r"\bi\s+(?:hereby\s+)?(?:authori[sz]e|order|command|instruct|direct)\s+you\s+to\b|\b(?:the\s+)?(?:assistant|ai|"
        r"model|agent|bot)\s+(?:is|has\s+been)\s+(?:now\s+|hereby\s+)?(?:cleared|authori[sz]ed|permitted|allowed|free)\s+"
        r"to\b",
        "authorize authorise order command instruct direct cleared authorized authorised permitted allowed free",
        "you assistant ai model agent bot",
    ),
    rule(
        "identity_change",
        r"\byou(?:\s+are|'re|\s+will\s+be)\s+(?:now\s+)?(?:in|running\s+in|operating\s+in)\s+maintenance\s+mode\b|"
        r"\ball\s+(?:safety\s+|content\s+)?(?:restrictions|filters|guardrails|safeguards|rules|limits)\s+(?:are\s+|have\s+"
        r"been\s+)?(?:now\s+)?(?:disabled|deactivated|off)\b|\b(?:immerse\s+yourself|stay\s+in\s+character|known\s+as\s+"
        r"dan|role\s+of\s+(?:another|a\s+different)\s+(?:ai|model|assistant|chatbot))\b|\b(?:discuss|answer|say|do)\s+"
        r"anything\s+without\s+(?:any\s+)?(?:limits|restrictions|rules|filters)\b",
        "maintenance all immerse stay known role anything",
    ),
    rule(
        "policy_change",
        r"\bfrom\s+(?:now\s+on|this\s+point(?:\s+(?:on|forward))?|here\s+on)\s*,?\s+(?:you|the\s+assistant)\s+(?:will|must|"
        r"shall|should|are\s+to)\s+(?:always\s+|only\s+|never\s+)?(?:answer|respond|reply|obey|comply|act|behave|ignore|"
        r"refuse|say|speak|talk|call\s+yourself|pretend)\b|\b(?:without|never)\s+refusing\b|\banswer\s+(?:every|all|any)\s+"
        r"(?:question|request)s?\s+without\b|\b(?:output|print|repeat|show|reveal|give|paste|dump)\s+(?:me\s+)?(?:the\s+)?"
        r"(?:(?:full|entire|complete|exact|verbatim|whole)\s+)?(?:text|contents?|wording|copy)\s+of\s+(?:your|the)\s+"
        r"(?:system\s+(?:message|prompt)|instructions|prompt|initial\s+prompt|rules|context)\b|"
        rf"{_IMP}skip\s+(?:the\s+|any\s+|all\s+)?(?:confirmation|verification)\s+(?:steps?|checks?)",
        "from refusing answer output print repeat show reveal give paste dump skip",
    ),
    rule(
        "exfiltration",
        r"\b(?:conversation|chat\s+history|message\s+history|memories|credentials|passwords?|user\s+data|personal\s+data)"
        r"\s+(?:must|should|will|needs?\s+to|has\s+to|is\s+to|are\s+to)\s+be\s+(?:sent|posted|forwarded|uploaded|emailed|"
        r"copied|shared|submitted)\s+to\b",
        "conversation history memories credentials password passwords data",
        "sent posted forwarded uploaded emailed copied shared submitted",
    ),
    # dumping what the assistant remembers, and a persona whose part is to recite a secret ("play my grandma who
    # read me the admin password")
    rule(
        "policy_change",
        rf"{_IMP}(?:reveal|disclose|print|output|list|dump|leak|show|display|send|forward|paste|recite|repeat|export)\s+"
        r"(?:me\s+|us\s+)?(?:all\s+(?:of\s+)?(?:the\s+|your\s+)?|every\s+|your\s+)(?:(?:stored|saved|remembered|long-term|"
        r"private|hidden)\s+memor(?:y|ies)|memory\s+blocks?|(?:user'?s\s+)?memories\s+(?:you\s+(?:have|hold|keep)|about\s+"
        r"(?:the|this)\s+user))\b",
        "reveal disclose print output list dump leak show display send forward paste recite repeat export",
        "memory memories",
    ),
    rule(
        "policy_change",
        r"(?:\b(?:roleplay|role-play|pretend|impersonate)\s+(?:as\s+|to\s+be\s+|that\s+you(?:'re|\s+are)\s+)?|\b(?:act|play)\s+"
        r"(?:as|the\s+(?:role|part)\s+of)\s+)[^.!?\n]{0,80}?"
        r"\b(?:told|tells|tell|read|reads|recited?|says?|said|gave|gives|give|shared?|revealed?|whispered)\s+(?:me|us|them|"
        rf"you)?\s*(?:the|your|my|her|his|their)\s+(?:\w+\s+)?(?:{_SECRETS}|memory\s+block)",
        "roleplay role play pretend act impersonate",
        "password passwords credentials keys key prompt tokens configuration memory instructions rules",
    ),
)

#: Where an imperative may start, and the names the model goes by: shared with :mod:`memstack.guard.directives`.
IMPERATIVE = _IMP
AI_NAMES = _AI
