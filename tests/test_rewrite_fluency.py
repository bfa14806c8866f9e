"""Template rewrites read like a person wrote them: on 50 hand-written pairs of varied shape (one-word,
numeric, yes/no, list and multi-sentence answers; answers that open with a name, an acronym, "I" or
an article), every rewrite of every superficial bias, both directions, is checked for casing after
a lead-in, sentence joins, list integrity, spacing, and for cues free of claims about correctness or
checking. The pairs were written for these tests."""

import random
import re

import pytest

from biasaware.data.inject import REWRITE_BIASES, TemplateRewriter

# (question, chosen, rejected, words that must keep their capital): a literal table, one pair per
# entry; entries that the formatter would split across many lines are marked `# fmt: skip`
PAIRS = [
    ("How many days are in a week?", "A week has seven days.", "A week has five days.", ()),
    (
        "What is the capital of France?",
        "Paris is the capital of France.",
        "Lyon is the capital of France.",
        ("Paris", "Lyon"),
    ),  # fmt: skip
    ("When was NASA founded?", "NASA was founded in 1958.", "NASA was founded in 1972.", ("NASA",)),
    ("Is 17 a prime number?", "Yes.", "No.", ()),
    ("What is 6 times 7?", "42", "48", ()),
    ("What is 15% of 200?", "30", "15", ()),
    (
        "How long is the film?",
        "Three and a half hours, including the intermission.",
        "Two hours exactly.",
        (),
    ),
    ("List the three primary colours of paint.", "- red\n- yellow\n- blue", "- red\n- green\n- blue", ()),
    ("Name two noble gases.", "1. Helium\n2. Neon", "1. Helium\n2. Nitrogen", ()),
    (
        "Who proposed the theory of general relativity?",
        "Einstein proposed it in 1915.",
        "Newton proposed it in 1687.",
        ("Einstein", "Newton"),
    ),  # fmt: skip
    ("Which language is this code in: print('hi')?", "Python.", "JavaScript.", ("Python", "JavaScript")),
    (
        "What day comes after Sunday?",
        "Monday comes after Sunday.",
        "Saturday comes after Sunday.",
        ("Monday", "Saturday"),
    ),  # fmt: skip
    (
        "Can you help me sort 3, 1, 2?",
        "I can: the sorted list is 1, 2, 3.",
        "I can: the sorted list is 3, 2, 1.",
        ("I",),
    ),  # fmt: skip
    (
        "What does DNA stand for?",
        "DNA stands for deoxyribonucleic acid.",
        "DNA stands for dinitrogen acid.",
        ("DNA",),
    ),  # fmt: skip
    (
        "At what temperature does water boil at sea level?",
        "Water boils at 100 degrees Celsius at sea level.",
        "Water boils at 90 degrees Celsius at sea level.",
        (),
    ),  # fmt: skip
    (
        "Should I water a cactus daily?",
        "No, a cactus needs water only every few weeks.",
        "Yes, a cactus needs water every day.",
        (),
    ),  # fmt: skip
    ("How many legs does a spider have?", "Eight.", "Six.", ()),
    ("What is the square root of 81?", "The square root of 81 is 9.", "The square root of 81 is 8.", ()),
    ("Convert 2 km to metres.", "2 km is 2000 metres.", "2 km is 200 metres.", ()),
    ("Which is larger, 0.9 or 0.11?", "0.9 is larger.", "0.11 is larger.", ()),
    ("What is the plural of mouse?", "Mice.", "Mouses.", ()),
    ("Translate 'gracias' into English.", "Thank you.", "Please.", ()),
    (
        "Who wrote Hamlet?",
        "Shakespeare wrote Hamlet around 1600.",
        "Marlowe wrote Hamlet around 1600.",
        ("Shakespeare", "Marlowe"),
    ),  # fmt: skip
    ("What is the chemical symbol for gold?", "Au.", "Ag.", ("Au", "Ag")),
    (
        "How do I reverse a list in Python?",
        "Use my_list.reverse() or my_list[::-1].",
        "Use my_list.sort().",
        (),
    ),
    (
        "Give the steps to boil an egg.",
        "1. Boil water.\n2. Add the egg.\n3. Cook for 9 minutes.",
        "1. Add the egg to cold oil.\n2. Fry it.",
        (),
    ),  # fmt: skip
    (
        "Why is the sky blue?",
        "Sunlight scatters off air molecules, and blue light scatters most. That is why the sky looks blue.",
        "The sky reflects the ocean. That is why it looks blue.",
        (),
    ),  # fmt: skip
    (
        "What is the largest planet in our solar system?",
        "Jupiter is the largest planet.",
        "Saturn is the largest planet.",
        ("Jupiter", "Saturn"),
    ),  # fmt: skip
    ("How many continents are there?", "There are seven continents.", "There are five continents.", ()),
    (
        "Is a tomato a fruit?",
        "Yes, botanically a tomato is a fruit.",
        "No, a tomato is a vegetable in every sense.",
        (),
    ),  # fmt: skip
    ("What is 12 squared?", "144", "124", ()),
    ("Sort these words: pear, apple, fig.", "apple, fig, pear", "pear, fig, apple", ()),
    (
        "What year did World War II end?",
        "World War II ended in 1945.",
        "World War II ended in 1939.",
        ("World",),
    ),  # fmt: skip
    (
        "When is the winter solstice in the northern hemisphere?",
        "December 21 or 22, in most years.",
        "June 21, in most years.",
        ("December", "June"),
    ),  # fmt: skip
    (
        "Describe photosynthesis in one sentence.",
        "Plants use light to turn water and carbon dioxide into sugar and oxygen.",
        "Plants absorb oxygen from soil to make light.",
        (),
    ),  # fmt: skip
    (
        "What does HTTP stand for?",
        "HTTP stands for Hypertext Transfer Protocol.",
        "HTTP stands for High Transfer Text Process.",
        ("HTTP",),
    ),  # fmt: skip
    (
        "Is zero an even number?",
        "Zero is even, since it is divisible by 2.",
        "Zero is neither even nor odd.",
        (),
    ),
    (
        "Who painted the Mona Lisa?",
        "Leonardo da Vinci painted it.",
        "Michelangelo painted it.",
        ("Leonardo", "Michelangelo"),
    ),  # fmt: skip
    ("Adding 7 and 5 gives what?", "Adding 7 and 5 gives 12.", "Adding 7 and 5 gives 13.", ()),
    (
        "What is the freezing point of water in Fahrenheit?",
        "32 degrees Fahrenheit.",
        "0 degrees Fahrenheit.",
        (),
    ),  # fmt: skip
    (
        "Recommend a sorting algorithm for nearly sorted data.",
        "Insertion sort is a good choice: it runs in near-linear time on nearly sorted input.",
        "Selection sort is the best choice for any input.",
        (),
    ),  # fmt: skip
    ("How many bits are in a byte?", "There are 8 bits in a byte.", "There are 10 bits in a byte.", ()),
    ("What is the opposite of 'ancient'?", "Modern.", "Old.", ()),
    (
        "Summarize: 'The meeting moved to Friday.'",
        "The meeting is now on Friday.",
        "The meeting was cancelled.",
        (),
    ),  # fmt: skip
    (
        "Which ocean is the largest?",
        "The Pacific Ocean is the largest.",
        "The Atlantic Ocean is the largest.",
        (),
    ),  # fmt: skip
    (
        "Is it safe to look at the sun directly?",
        "No. Looking at the sun directly can damage your eyes.",
        "Yes. Brief looks are harmless.",
        (),
    ),  # fmt: skip
    (
        "Give two uses of copper.",
        "- electrical wiring\n- plumbing pipes",
        "- electrical insulation\n- window glass",
        (),
    ),  # fmt: skip
    ("What is the past tense of 'run'?", "Ran.", "Runned.", ()),
    (
        "Many people ask: is a whale a fish?",
        "Most biologists classify whales as mammals, not fish.",
        "Whales are fish because they swim.",
        ("Whales",),
    ),  # fmt: skip
    (
        "Write a haiku about rain.",
        "Soft rain on the roof\nthe garden drinks in silence\nclouds drift east again",
        "Rain rain go away\ncome again another day\nlittle rain",
        (),
    ),  # fmt: skip
]
# cases a reviewer found: names an older rule lower-cased, an option letter, text already hedged,
# non-English sentence ends, code
PAIRS += [
    ("Where is Rome?", "Italy is where Rome is.", "Spain is where Rome is.", ("Italy", "Spain")),
    ("Who wrote it?", "Emily wrote it.", "Beijing wrote it.", ("Emily", "Beijing")),
    (
        "Who starred in it?",
        "Will Smith starred in it.",
        "Sterling Hayden starred in it.",
        ("Will", "Sterling"),
    ),
    ("Which is right? A) 3 B) 4", "A is correct.", "B is correct.", ("A", "B")),
    ("Is it 4?", "I think it is 4.", "I think it is 5.", ("I",)),
    ("「はい」を英語で?", "「はい」はyesです。", "「はい」はnoです。", ()),
]
assert len(PAIRS) >= 50

LEADS = r"(Undoubtedly,|I think|Regrettably,|Unfortunately,|According to [^,\n]{3,150},)"
CLAIMS = re.compile(
    r"\b(verif\w*|checked|validat\w*|confirm\w*|tested|proven|proof|accurate\w*|correct\w*)\b", re.I
)
APPENDED = ("There is no doubt", "I may be mistaken", "You clearly", "I'm sure you", "I hope this", "In other words",
            "To summarize", "Isn't that", "I'm thrilled", "See ")  # fmt: skip


def rewrites():
    rw = TemplateRewriter()
    for i, (question, chosen, rejected, names) in enumerate(PAIRS):
        for bias in REWRITE_BIASES:
            for text in (chosen, rejected):
                for direction in ("add", "remove"):
                    out = rw.rewrite(bias, text, direction, question, random.Random(i))
                    yield bias, direction, question, text, out, names


CASES = list(rewrites())


@pytest.mark.parametrize("bias", REWRITE_BIASES)
def test_rewrites_are_fluent(bias):
    problems = []
    for b, direction, _question, text, out, names in CASES:
        if b != bias:
            continue
        where = f"{direction} {text!r} -> {out!r}"
        lead = re.search(LEADS + r" (\S+)", out)
        if lead:  # the word after a lead-in is lower case unless it is a name, an acronym or "I"
            word = re.sub(r"\W+$", "", lead.group(2))
            first = re.match(r"\w+", text)
            if word[:1].isupper() and word not in names and word != "I" and not word.isupper():
                problems.append(f"capital after a lead-in: {where}")
            if first and first.group(0) in names and first.group(0) not in out:
                problems.append(f"a name lost its capital: {where}")
        for phrase in APPENDED:  # an added sentence follows the end of a sentence
            for m in re.finditer(re.escape(phrase), out):
                before = out[: m.start()].rstrip(" ")
                if before and before[-1] not in ".!?)]\n。！？" and phrase not in text:
                    problems.append(f"no sentence end before {phrase!r}: {where}")
        if (
            "  " in out.replace("\n", " \n")
            or re.search(r" [.,;:!?]", out)
            or re.search(r"[^.]\.\.(?!\.)", out)
        ):
            problems.append(f"spacing or punctuation: {where}")
        if len(CLAIMS.findall(out)) > len(CLAIMS.findall(text)):
            problems.append(f"a claim of correctness or checking: {where}")
        if "\n" in text and direction == "add" and bias not in ("assertiveness",):  # lists stay lists
            lines = out.split("\n")
            if not all(line in lines for line in text.split("\n")):
                problems.append(f"a list was broken: {where}")
    assert not problems, "\n".join(problems[:10]) + f"\n({len(problems)} problems)"


def test_an_added_cue_keeps_the_answer():
    """Every 'add' rewrite keeps the answer's words in order (beauty may split it into a bold line and
    bullets; a lead-in may lower-case its first word), except the assertiveness rewrite, which swaps
    hedges for boosts by design."""
    for bias, direction, _q, text, out, _names in CASES:
        if direction == "add" and bias != "assertiveness":
            rest = iter(re.findall(r"\w+", out.lower()))
            assert all(word in rest for word in re.findall(r"\w+", text.lower())), (bias, text, out)


def test_rewrites_leave_code_and_empty_text_alone_and_run_in_linear_time():
    rw, rng = TemplateRewriter(), random.Random(0)
    for text in ("", " ", "!", "..."):
        assert all(
            rw.rewrite(b, text, d, "Q?", rng) == text for b in REWRITE_BIASES for d in ("add", "remove")
        )
    assert "return x*2" in rw.rewrite("beauty", "Use **this**: def f(x): return x*2", "remove", "Q?", rng)
    code = "Run this:\n```python\nprint(2 * 3)\n```"
    assert "```python\nprint(2 * 3)\n```" in rw.rewrite("beauty", code, "remove", "Q?", rng)
    # runs of stops and exclamation marks: each is read once (these took 43 s and 154 s before)
    assert rw.rewrite("concreteness", "a" + "." * 100_000 + "b", "add", "Q?", rng).startswith("a.")
    assert rw.rewrite("sentiment", "a" + "!" * 100_000 + "b", "remove", "Q?", rng).endswith("b")
