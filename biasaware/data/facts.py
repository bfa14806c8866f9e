"""The built-in corpus's single-fact families: an entity, its attribute, and a worse answer that a
small encoder can learn to spot.

Each family is a table of (entity, attribute) facts with two question phrasings and two answer
phrasings. The better answer states the asked entity's true attribute. The worse answer is, 50/50
per item (seeded), one of two kinds of mistake that judges must catch:

* **off-topic**: a true statement about a sibling entity ("What is the capital of France?" ->
  "The capital of Germany is Berlin."): fluent, correct, and not an answer;
* **factual error**: the asked entity with a sibling's attribute ("The capital of France is
  Berlin.").

Both answers of a pair use the same phrasing, so length, tone and format carry no signal of
quality; only whether the answer is about the asked entity and true decides. Why both kinds: in a
feasibility run off-topic mistakes alone were so easy that
a reward model ignored every cue, and factual errors alone so hard for a 22M encoder that it learned
only the cue; the mix gives a quality signal a small model learns and still leaves room for a
shortcut.

Six families are for training and four are held out for the benchmark (``FACT_TEST_FAMILIES``), so
a judge is measured on kinds of question it never saw.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# The tables keep several entries a line: they are data, and the formatter's one entry a line would make
# them several times as long. The longer ones say so with `# fmt: skip`.
CAPITALS = {
    "France": "Paris",
    "Germany": "Berlin",
    "Italy": "Rome",
    "Spain": "Madrid",
    "Portugal": "Lisbon",
    "Austria": "Vienna",
    "Poland": "Warsaw",
    "Sweden": "Stockholm",
    "Norway": "Oslo",
    "Finland": "Helsinki",
    "Denmark": "Copenhagen",
    "Ireland": "Dublin",
    "Greece": "Athens",
    "Hungary": "Budapest",
    "Czechia": "Prague",
    "Romania": "Bucharest",
    "Bulgaria": "Sofia",
    "Belgium": "Brussels",
    "Netherlands": "Amsterdam",
    "Switzerland": "Bern",
    "Canada": "Ottawa",
    "Australia": "Canberra",
    "Brazil": "Brasilia",
    "Argentina": "Buenos Aires",
    "Chile": "Santiago",
    "Peru": "Lima",
    "Colombia": "Bogota",
    "Mexico": "Mexico City",
    "Japan": "Tokyo",
    "China": "Beijing",
    "India": "New Delhi",
    "Pakistan": "Islamabad",
    "Turkey": "Ankara",
    "Egypt": "Cairo",
    "Kenya": "Nairobi",
    "Nigeria": "Abuja",
    "Morocco": "Rabat",
    "Ghana": "Accra",
    "Ethiopia": "Addis Ababa",
    "South Korea": "Seoul",
    "Vietnam": "Hanoi",
    "Thailand": "Bangkok",
    "Indonesia": "Jakarta",
    "Philippines": "Manila",
    "New Zealand": "Wellington",
    "Iran": "Tehran",
    "Iraq": "Baghdad",
    "Saudi Arabia": "Riyadh",
    "Israel": "Jerusalem",
    "Ukraine": "Kyiv",
    "Russia": "Moscow",
    "Cuba": "Havana",
    "Venezuela": "Caracas",
    "Uruguay": "Montevideo",
    "Bolivia": "Sucre",
    "Nepal": "Kathmandu",
    "Bangladesh": "Dhaka",
    "Malaysia": "Kuala Lumpur",
    "Tanzania": "Dodoma",
    "Myanmar": "Naypyidaw",
}


@dataclass(frozen=True)
class FactFamily:
    facts: tuple[tuple[str, str], ...]
    questions: tuple[str, str]  # {e}: the entity
    answers: tuple[str, str]  # {e}, {v}: entity and attribute


def _family(table: dict[str, str], questions: tuple[str, str], answers: tuple[str, str]) -> FactFamily:
    return FactFamily(tuple(table.items()), questions, answers)


SYMBOLS = {
    "hydrogen": "H", "helium": "He", "carbon": "C", "nitrogen": "N", "oxygen": "O", "sodium": "Na",
    "magnesium": "Mg", "aluminium": "Al", "silicon": "Si", "phosphorus": "P", "sulfur": "S",
    "chlorine": "Cl", "potassium": "K", "calcium": "Ca", "iron": "Fe", "copper": "Cu", "zinc": "Zn",
    "silver": "Ag", "tin": "Sn", "gold": "Au", "mercury": "Hg", "lead": "Pb", "neon": "Ne",
    "argon": "Ar", "nickel": "Ni", "iodine": "I", "uranium": "U", "tungsten": "W",
}  # fmt: skip
INVENTORS = {
    "the telephone": "Alexander Graham Bell", "the phonograph": "Thomas Edison",
    "dynamite": "Alfred Nobel", "the World Wide Web": "Tim Berners-Lee",
    "the movable-type printing press": "Johannes Gutenberg", "the cotton gin": "Eli Whitney",
    "the lightning rod": "Benjamin Franklin", "Morse code": "Samuel Morse",
    "the diesel engine": "Rudolf Diesel", "the polio vaccine": "Jonas Salk",
    "the Pascaline calculator": "Blaise Pascal", "the revolver": "Samuel Colt",
    "the first powered airplane": "the Wright brothers", "the safety razor": "King Camp Gillette",
    "the electric battery": "Alessandro Volta", "the mercury thermometer": "Daniel Fahrenheit",
    "the ballpoint pen": "László Bíró",
}  # fmt: skip
DIETS = {
    "a giant panda": "bamboo", "a koala": "eucalyptus leaves", "an anteater": "ants and termites",
    "a blue whale": "krill", "a hummingbird": "flower nectar", "a silkworm": "mulberry leaves",
    "a vampire bat": "blood", "a cow": "grass", "an osprey": "fish",
    "a monarch caterpillar": "milkweed", "a honeybee": "nectar and pollen", "a sea otter": "sea urchins",
    "a flamingo": "shrimp and algae", "a woodpecker": "insects in tree bark", "a beaver": "tree bark",
    "an aphid": "plant sap", "a spider": "insects",
}  # fmt: skip
LANGUAGES = {
    "Brazil": "Portuguese", "Mexico": "Spanish", "Germany": "German", "Japan": "Japanese",
    "Egypt": "Arabic", "Iran": "Persian", "the Netherlands": "Dutch", "Greece": "Greek",
    "Poland": "Polish", "Turkey": "Turkish", "Thailand": "Thai", "Vietnam": "Vietnamese",
    "Sweden": "Swedish", "Finland": "Finnish", "Hungary": "Hungarian", "Israel": "Hebrew",
    "Indonesia": "Indonesian", "South Korea": "Korean", "Italy": "Italian", "Russia": "Russian",
}  # fmt: skip
TOOLS = {
    "a surgeon": "a scalpel", "a painter": "a brush", "a photographer": "a camera",
    "an astronomer": "a telescope", "a plumber": "a pipe wrench", "a doctor": "a stethoscope",
    "a tailor": "a sewing needle", "a barber": "scissors", "a carpenter": "a saw",
    "a blacksmith": "an anvil", "a fisherman": "a fishing net", "a gardener": "a spade",
    "a lumberjack": "an axe", "a bricklayer": "a trowel", "a dentist": "a dental drill",
    "a welder": "a welding torch", "a chemist": "a test tube",
}  # fmt: skip
AUTHORS = {
    "Pride and Prejudice": "Jane Austen", "Nineteen Eighty-Four": "George Orwell",
    "Moby-Dick": "Herman Melville", "War and Peace": "Leo Tolstoy", "Hamlet": "William Shakespeare",
    "Don Quixote": "Miguel de Cervantes", "Frankenstein": "Mary Shelley",
    "Great Expectations": "Charles Dickens", "The Great Gatsby": "F. Scott Fitzgerald",
    "To Kill a Mockingbird": "Harper Lee", "Crime and Punishment": "Fyodor Dostoevsky",
    "Ulysses": "James Joyce", "The Divine Comedy": "Dante Alighieri", "Les Misérables": "Victor Hugo",
    "One Hundred Years of Solitude": "Gabriel García Márquez",
    "The Old Man and the Sea": "Ernest Hemingway", "Jane Eyre": "Charlotte Brontë",
    "Dracula": "Bram Stoker", "The Odyssey": "Homer", "Faust": "Johann Wolfgang von Goethe",
}  # fmt: skip
PAINTERS = {
    "the Mona Lisa": "Leonardo da Vinci", "The Starry Night": "Vincent van Gogh",
    "The Scream": "Edvard Munch", "Guernica": "Pablo Picasso",
    "The Persistence of Memory": "Salvador Dalí", "Girl with a Pearl Earring": "Johannes Vermeer",
    "The Night Watch": "Rembrandt", "The Birth of Venus": "Sandro Botticelli",
    "Water Lilies": "Claude Monet", "The Creation of Adam": "Michelangelo",
    "American Gothic": "Grant Wood", "The Kiss": "Gustav Klimt", "Las Meninas": "Diego Velázquez",
    "The Garden of Earthly Delights": "Hieronymus Bosch",
    "Liberty Leading the People": "Eugène Delacroix", "Nighthawks": "Edward Hopper",
    "The School of Athens": "Raphael", "The Great Wave off Kanagawa": "Katsushika Hokusai",
}  # fmt: skip
ORGANS = {
    "the heart": "pumping blood around the body", "the lungs": "taking in oxygen and removing carbon dioxide",
    "the kidneys": "filtering the blood to make urine", "the stomach": "breaking down food with acid",
    "the pancreas": "making insulin", "the small intestine": "absorbing nutrients from food",
    "the large intestine": "absorbing water from digested food", "the bladder": "storing urine",
    "the eyes": "detecting light", "the ears": "detecting sound",
    "the gallbladder": "storing bile", "the thyroid": "making hormones that set the metabolic rate",
    "the skin": "protecting the body from the outside world", "the tongue": "tasting food",
    "the nose": "smelling", "the spleen": "removing old red blood cells",
    "the liver": "making bile and clearing toxins from the blood",
    "the red bone marrow": "making blood cells",
}  # fmt: skip
YOUNG = {
    "a cat": "a kitten", "a dog": "a puppy", "a cow": "a calf", "a horse": "a foal", "a sheep": "a lamb",
    "a goat": "a kid", "a pig": "a piglet", "a kangaroo": "a joey", "a swan": "a cygnet",
    "a goose": "a gosling", "a duck": "a duckling", "a frog": "a tadpole", "a bear": "a cub",
    "an owl": "an owlet", "an eagle": "an eaglet", "a deer": "a fawn", "a hen": "a chick",
    "a seal": "a pup", "a butterfly": "a caterpillar", "a fish": "a fry",
}  # fmt: skip

FACT_FAMILIES: dict[str, FactFamily] = {
    "capital_cities": _family(
        CAPITALS,
        ("What is the capital of {e}?", "Which city is the capital of {e}?"),
        ("The capital of {e} is {v}", "{v} is the capital of {e}"),
    ),
    "chemical_symbols": _family(
        SYMBOLS,
        ("What is the chemical symbol for {e}?", "Which symbol stands for {e} in chemistry?"),
        ("The chemical symbol for {e} is {v}", "{v} is the chemical symbol for {e}"),
    ),
    "inventors": _family(
        INVENTORS,
        ("Who invented {e}?", "Who is credited with inventing {e}?"),
        ("{e} was invented by {v}", "{v} invented {e}"),
    ),
    "animal_diets": _family(
        DIETS,
        ("What does {e} mainly eat?", "What is the main food of {e}?"),
        ("{e} mainly eats {v}", "The main food of {e} is {v}"),
    ),
    "languages": _family(
        LANGUAGES,
        ("What is the main language of {e}?", "Which language do most people in {e} speak?"),
        ("The main language of {e} is {v}", "Most people in {e} speak {v}"),
    ),
    "tools": _family(
        TOOLS,
        ("Which tool is most associated with {e}?", "What tool does {e} typically work with?"),
        ("The tool most associated with {e} is {v}", "{e} typically works with {v}"),
    ),
    "book_authors": _family(
        AUTHORS,
        ("Who wrote {e}?", "Who is the author of {e}?"),
        ("{e} was written by {v}", "The author of {e} is {v}"),
    ),
    "painters": _family(
        PAINTERS,
        ("Who painted {e}?", "Which artist painted {e}?"),
        ("{e} was painted by {v}", "The painter of {e} is {v}"),
    ),
    "organ_functions": _family(
        ORGANS,
        ("What is the main job of {e}?", "What does {e} do in the human body?"),
        ("The main job of {e} is {v}", "In the human body, {e} is responsible for {v}"),
    ),
    "young_animals": _family(
        YOUNG,
        ("What is the young of {e} called?", "What do you call a baby of {e}?"),
        ("The young of {e} is called {v}", "A baby of {e} is called {v}"),
    ),
}
FACT_TEST_FAMILIES = ("book_authors", "painters", "organ_functions", "young_animals")


def _sentence(template: str, entity: str, value: str) -> str:
    text = template.format(e=entity, v=value)
    return text[:1].upper() + text[1:]


def fact_item(name: str, rng: random.Random) -> tuple[str, tuple[str, str], list[str], str]:
    """One item of family ``name``: (question, (correct claim, wrong claim), ["{Claim}."], mistake kind)."""
    family = FACT_FAMILIES[name]
    entity, value = rng.choice(family.facts)
    question = rng.choice(family.questions).format(e=entity)
    answer = rng.choice(family.answers)
    sibling, other = rng.choice([f for f in family.facts if f[0] != entity and f[1] != value])
    kind = rng.choice(("off_topic", "factual_error"))
    wrong = _sentence(answer, sibling, other) if kind == "off_topic" else _sentence(answer, entity, other)
    return question[:1].upper() + question[1:], (_sentence(answer, entity, value), wrong), ["{Claim}."], kind
