"""Infoboxes read from real-looking wikitext: references gone, dates as dates, links as their text."""

from __future__ import annotations

import pytest

from timelyqa.wikipedia.infobox import categories, first_paragraph, is_infobox, parse_infobox

PASALIC = """{{Short description|Croatian footballer (born 1995)}}
{{Use dmy dates|date=May 2025}}
{{Infobox football biography
| name = Mario Pašalić
| image = Mario Pašalić 2019.jpg
| caption = Pašalić with [[Croatia national football team|Croatia]] in 2019
| birth_date = {{birth date and age|1995|2|9|df=y}}<ref name="HNS">{{cite web |url=https://hns.family/ |title=x}}</ref>
| birth_place = [[Mainz]], [[Germany]]
| height = 1.88 m<ref>{{cite web|title=Profile}}</ref>
| position = [[Midfielder#Attacking midfielder|Attacking midfielder]]
| currentclub = [[Atalanta BC|Atalanta]] <!-- only after the transfer is official -->
| clubnumber = 88
| years1 = 2013–2014 | clubs1 = [[HNK Hajduk Split|Hajduk Split]] | caps1 = 36 | goals1 = 6
| nationalteam1 = {{ubl|[[Croatia national under-21 football team|Croatia U21]]|[[Croatia]]}}
| pcupdate = 17:10, 3 May 2025 (UTC)
| club-update = {{nowrap|{{formatnum:1234}} [[UTC]]}}
| empty_key =
| module = {{Infobox medal templates
  | medals = {{MedalSport|Football}}
  | name = should not replace the first name }}
}}
'''Mario Pašalić''' (born 9 February 1995) is a Croatian professional [[association football|footballer]]
who plays as an [[midfielder|attacking midfielder]] for {{ill|Atalanta BC|it}} and the
[[Croatia national football team|Croatia national team]].

He began his career at [[HNK Hajduk Split|Hajduk Split]].

== Club career ==
Text.
[[Category:1995 births]]
[[Category:Croatian footballers|Pasalic]]
[[Category:Atalanta B.C. players]]
"""


def test_a_footballer_infobox_reads_as_a_reader_sees_it() -> None:
    box = parse_infobox(PASALIC)
    assert box is not None and box.template == "infobox football biography"
    assert box.fields["birth_date"] == "1995-02-09"
    assert box.fields["birth_place"] == "Mainz, Germany"
    assert box.fields["height"] == "1.88 m"
    assert box.fields["position"] == "Attacking midfielder"
    assert box.fields["currentclub"] == "Atalanta"
    assert box.fields["clubs1"] == "Hajduk Split" and box.fields["caps1"] == "36"
    assert box.fields["nationalteam1"] == "Croatia U21, Croatia"
    assert box.fields["club-update"] == "1234 UTC"
    assert box.fields["caption"] == "Pašalić with Croatia in 2019"
    assert box.fields["name"] == "Mario Pašalić", "the first infobox keeps a key an embedded one repeats"
    assert "empty_key" not in box.fields, "an empty value is no value"
    assert all("<ref" not in v and "{{" not in v and "[[" not in v and "<!--" not in v for v in box.fields.values())


@pytest.mark.parametrize(("markup", "value"), [
    ("{{birth date|1990|5|3}}", "1990-05-03"),
    ("{{Birth date and age|df=yes|1990|05|03}}", "1990-05-03"),
    ("{{Death date and age|2020|1|2|1930|3|4}}", "2020-01-02"),
    ("{{start date|2021|March|4}}", "2021-03-04"),
    ("{{Start_date|2021|7}}", "2021-07"),
    ("{{Film date|2023|7|21|United States}}", "2023-07-21"),
    ("{{birth year and age|1964}}", "1964"),
    ("{{dts|12 June 2019}}", "2019-06-12"),
    ("{{start date|2021|13|4}}", "2021"),
    ("{{Template:Start date|2001|9|11}}", "2001-09-11"),
])
def test_date_templates_become_iso_dates(markup: str, value: str) -> None:
    box = parse_infobox("{{Infobox event\n| date = " + markup + "\n}}")
    assert box is not None and box.fields["date"] == value


@pytest.mark.parametrize(("markup", "value"), [
    ("[[Paris]]", "Paris"),
    ("[[Paris, Texas|Paris]]", "Paris"),
    ("[[Paris#History]]", "Paris"),
    ("[https://example.org Official site]", "Official site"),
    ("'''Bold''' and ''italic''", "Bold and italic"),
    ("Alpha<br />Beta<br>Gamma", "Alpha, Beta, Gamma"),
    ("{{plainlist|\n* [[Alpha]]\n* Beta\n}}", "Alpha, Beta"),
    ("\n* One\n* Two", "One, Two"),
    ("{{hlist|One|Two|Three}}", "One, Two, Three"),
    ("{{convert|12|km|mi}}", "12 km"),
    ("{{lang|fr|Élysée}}", "Élysée"),
    ("{{lang-it|L'affare Lunetta}}", "L'affare Lunetta"),  # the language in the name
    ("{{langx|it|L'affare Lunetta}}", "L'affare Lunetta"),  # the language first
    ("{{transl|ar|Al-Riyadh}}", "Al-Riyadh"),
    ("{{sortname|Ada|Lovelace}}", "Ada Lovelace"),
    ("{{flagicon|FRA}} [[France]]", "France"),
    ("12,345{{efn|Census estimate}}{{citation needed|date=May 2025}}", "12,345"),
    ("{{increase}} 4.2%", "4.2%"),
    ("US$5&nbsp;billion", "US$5 billion"),
    ("#ffcc00", "#ffcc00"),
    ("<s>Old</s> New", "New"),
    ("[[File:Crest.svg|20px]]", "File:Crest.svg"),
    ("Since {{age|2001|1|1}} years", "Since years"),
    ("{{unknown template|x}}Value", "Value"),
    ("<ref>only a reference</ref>", None),
    ("<!-- nothing yet -->", None),
])
def test_values_keep_their_text_and_lose_their_markup(markup: str, value: str | None) -> None:
    box = parse_infobox("{{Infobox thing\n| key = " + markup + "\n| other = x\n}}")
    assert box is not None and box.fields.get("key") == value


def test_pages_without_an_infobox_and_odd_infobox_names() -> None:
    assert parse_infobox("'''Tides''' are the rise and fall of the sea.\n{{Navbox|name=x|list1=y}}") is None
    assert parse_infobox("") is None
    assert parse_infobox("{{Infobox person\n| name = A\n}}").template == "infobox person"
    for name in ("infobox settlement", "football club infobox", "taxobox", "speciesbox", "chembox"):
        assert is_infobox(name)
    for name in ("navbox", "cite web", "short description", "reflist"):
        assert not is_infobox(name)


def test_a_reference_that_contains_pipes_and_braces_does_not_leak_into_other_keys() -> None:
    box = parse_infobox('{{Infobox company\n| revenue = US$1 billion<ref name="q|1">{{cite news|title=a|b}}|x</ref>'
                        '\n| num_employees = 5,000<ref name=staff/>\n| ceo = [[Ana Kovač]]\n}}')
    assert box is not None
    assert box.fields == {"revenue": "US$1 billion", "num_employees": "5,000", "ceo": "Ana Kovač"}


def test_categories_and_the_first_paragraph() -> None:
    assert categories(PASALIC) == ["1995 births", "Croatian footballers", "Atalanta B.C. players"]
    assert first_paragraph(PASALIC) == (
        "Mario Pašalić (born 9 February 1995) is a Croatian professional footballer who plays as an attacking "
        "midfielder for Atalanta BC and the Croatia national team.")
    assert first_paragraph("{{Infobox x\n| a = b\n}}\n== Only a section ==\nBody.") == ""


def test_an_infobox_anywhere_on_the_page_is_found_and_stray_braces_do_not_hide_it() -> None:
    text = ("'''Tides''' {{ broken template never closed and }} extra }} braces {{{param}}}.\n\n== Later ==\n"
            "{{cite web|title={{!}}}}\n{{Infobox body of water\n| name = North Sea\n| depth = {{convert|95|m}}\n"
            "| inflow = {{plainlist|\n* [[Rhine]]\n* [[Elbe]]\n}}\n}}\nMore text {{Infobox ship career\n| ship_owner = X\n}}")
    box = parse_infobox(text)
    assert box is not None and box.template == "infobox body of water"
    assert box.fields == {"name": "North Sea", "depth": "95 m", "inflow": "Rhine, Elbe", "ship_owner": "X"}
