"""The gate's off-topic probes (R4): questions no team documents, by topic, in English, Turkish
and German (one translation each, so a topic can be left out as a whole when the gate is
calibrated). Everyday topics and near-miss technical questions about general-purpose software.
``eval/offtopic.yaml`` is written apart from these (a test keeps the two disjoint)."""

from __future__ import annotations

LANGUAGES = ("en", "tr", "de")

TOPICS: dict[str, tuple[str, str, str]] = {
    "soup": ("recipe for lentil soup", "mercimek çorbası tarifi", "Rezept für Linsensuppe"),
    "bread": (
        "how to make sourdough bread",
        "evde ekşi mayalı ekmek nasıl yapılır",
        "Sauerteigbrot selber backen",
    ),
    "cake": (
        "easy chocolate cake without an oven",
        "fırınsız kolay çikolatalı pasta",
        "einfacher Schokoladenkuchen ohne Backofen",
    ),
    "barbecue": (
        "how long to grill chicken wings",
        "mangalda tavuk kanat kaç dakika pişer",
        "wie lange müssen Chicken Wings auf den Grill",
    ),
    "coffee": (
        "how to make cold brew coffee at home",
        "evde soğuk demleme kahve nasıl yapılır",
        "Cold Brew Kaffee zu Hause zubereiten",
    ),
    "puppy": (
        "how to train a puppy to sit",
        "köpek yavrusuna otur komutu nasıl öğretilir",
        "wie bringe ich meinem Welpen Sitz bei",
    ),
    "cat": (
        "why does my cat scratch the sofa",
        "kedim neden koltuğu tırmalıyor",
        "warum kratzt meine Katze am Sofa",
    ),
    "garden": (
        "tips for growing tomatoes on a balcony",
        "balkonda domates yetiştirmenin püf noktaları",
        "Tomaten auf dem Balkon anbauen",
    ),
    "houseplant": (
        "why are the leaves of my orchid turning yellow",
        "orkidemin yaprakları neden sararıyor",
        "warum werden die Blätter meiner Orchidee gelb",
    ),
    "football": (
        "football match results from last weekend",
        "dün akşamki futbol maçının sonucu",
        "Fußballergebnisse vom letzten Wochenende",
    ),
    "olympics": (
        "which country won the most medals at the olympics",
        "olimpiyatlarda en çok madalya kazanan ülke",
        "welches Land gewann die meisten Medaillen bei Olympia",
    ),
    "yoga": (
        "yoga poses for beginners",
        "yeni başlayanlar için yoga hareketleri",
        "Yogaübungen für Anfänger",
    ),
    "gym": (
        "how many push ups should I do a day",
        "günde kaç şınav çekmeliyim",
        "wie viele Liegestütze sollte man am Tag machen",
    ),
    "hiking": (
        "best hiking trails in the alps",
        "karadeniz yaylalarında yürüyüş rotaları",
        "schönste Wanderwege in den Alpen",
    ),
    "flights": (
        "cheap flights to lisbon in may",
        "mayısta lizbon'a ucuz uçak bileti",
        "günstige Flüge nach Lissabon im Mai",
    ),
    "sightseeing": (
        "what to see in rome in three days",
        "roma'da üç günde görülecek yerler",
        "Rom in drei Tagen was muss man sehen",
    ),
    "hotel": (
        "family friendly hotels near the beach",
        "denize yakın aileye uygun oteller",
        "familienfreundliche Hotels in Strandnähe",
    ),
    "passport": (
        "how long does it take to renew a passport",
        "pasaport yenilemek ne kadar sürer",
        "wie lange dauert es einen Reisepass zu verlängern",
    ),
    "luggage": (
        "carry on luggage size limits for airlines",
        "uçakta kabin bagajı ölçüleri",
        "erlaubte Größe für Handgepäck im Flugzeug",
    ),
    "cold": (
        "symptoms of the common cold",
        "soğuk algınlığının belirtileri",
        "Symptome einer Erkältung",
    ),
    "headache": (
        "what helps against a headache without pills",
        "ilaçsız baş ağrısına ne iyi gelir",
        "was hilft gegen Kopfschmerzen ohne Tabletten",
    ),
    "diet": (
        "healthy breakfast ideas to lose weight",
        "kilo vermek için sağlıklı kahvaltı önerileri",
        "gesunde Frühstücksideen zum Abnehmen",
    ),
    "guitar": ("how to tune a guitar", "gitar akordu nasıl yapılır", "wie stimme ich eine Gitarre"),
    "lovesong": (
        "lyrics of a famous love song",
        "en güzel aşk şarkılarının sözleri",
        "Text eines berühmten Liebeslieds",
    ),
    "movies": (
        "best movies of the eighties",
        "en iyi bilim kurgu filmleri",
        "die besten Filme der achtziger Jahre",
    ),
    "series": (
        "what happens in the last season of the series",
        "dizinin son sezonunda ne oluyor",
        "was passiert in der letzten Staffel der Serie",
    ),
    "book": (
        "good novels to read on holiday",
        "tatilde okunacak güzel romanlar",
        "gute Romane für den Urlaub",
    ),
    "chess": (
        "the rules of castling in chess",
        "satrançta rok yapma kuralları",
        "Regeln für die Rochade beim Schach",
    ),
    "weather": (
        "weather forecast for tomorrow",
        "yarın hava nasıl olacak",
        "Wettervorhersage für morgen",
    ),
    "wedding": (
        "wedding speech ideas",
        "düğün konuşması örnekleri",
        "Ideen für eine Hochzeitsrede",
    ),
    "knitting": ("how to knit a scarf", "atkı nasıl örülür", "wie strickt man einen Schal"),
    "capital": (
        "what is the capital of australia",
        "avustralya'nın başkenti neresidir",
        "was ist die Hauptstadt von Australien",
    ),
    "celebrity": (
        "how tall is cristiano ronaldo",
        "cristiano ronaldo'nun boyu kaç",
        "wie groß ist Cristiano Ronaldo",
    ),
    "painting": (
        "who painted the mona lisa",
        "mona lisa tablosunu kim yaptı",
        "wer hat die Mona Lisa gemalt",
    ),
    "tyres": (
        "when should I change to winter tyres",
        "kış lastiği ne zaman takılır",
        "wann wechselt man auf Winterreifen",
    ),
    "fashion": (
        "what to wear to a summer wedding",
        "yaz düğününe ne giyilir",
        "was zieht man zu einer Sommerhochzeit an",
    ),
    "rent": (
        "how to find a cheap apartment to rent",
        "ucuz kiralık daire nasıl bulunur",
        "wie finde ich eine günstige Mietwohnung",
    ),
    "day": ("how was your day", "günün nasıl geçti", "wie war dein Tag"),
    "interesting": (
        "tell me something interesting",
        "bana ilginç bir şey anlat",
        "erzähl mir etwas Interessantes",
    ),
    "friends": (
        "how to make new friends as an adult",
        "yetişkin biri nasıl yeni arkadaş edinir",
        "wie findet man als Erwachsener neue Freunde",
    ),
    "thanks": (
        "thanks a lot, see you later",
        "çok teşekkürler, sonra görüşürüz",
        "vielen Dank, bis später",
    ),
    "git": (
        "how to undo the last git commit",
        "son git commit nasıl geri alınır",
        "letzten Git Commit rückgängig machen",
    ),
    "pdf": (
        "convert a pdf file to a word document",
        "pdf dosyasını word belgesine çevirme",
        "PDF Datei in ein Word Dokument umwandeln",
    ),
    "python": (
        "python sort a list of dictionaries by key",
        "python'da sözlük listesini anahtara göre sıralama",
        "Python Liste von Dictionaries nach Schlüssel sortieren",
    ),
    "javascript": (
        "javascript add a click listener to a button",
        "javascript ile butona tıklama olayı ekleme",
        "JavaScript Klick Listener zu einem Button hinzufügen",
    ),
    "sql": (
        "sql query to find duplicate rows",
        "sql ile tekrar eden satırları bulma",
        "SQL Abfrage um doppelte Zeilen zu finden",
    ),
    "spreadsheet": (
        "google sheets formula to count cells with text",
        "google e-tablolarda metin içeren hücreleri sayma formülü",
        "Google Tabellen Formel um Zellen mit Text zu zählen",
    ),
    "linux": (
        "linux command to find large files",
        "linux'ta büyük dosyaları bulma komutu",
        "Linux Befehl um große Dateien zu finden",
    ),
    "docker": (
        "docker container exits immediately after start",
        "docker konteyneri başlar başlamaz kapanıyor",
        "Docker Container beendet sich sofort nach dem Start",
    ),
    "game": (
        "best open world video games",
        "en iyi açık dünya oyunları",
        "die besten Open World Videospiele",
    ),
    "mobile-app": (
        "how to make an app for android and ios",
        "android ve ios için uygulama nasıl yapılır",
        "wie programmiere ich eine App für Android und iOS",
    ),
    "email": (
        "how to recover a deleted gmail account",
        "silinen gmail hesabı nasıl kurtarılır",
        "gelöschtes Gmail Konto wiederherstellen",
    ),
    "diy": (
        "how to fix a dripping tap",
        "damlatan musluk nasıl tamir edilir",
        "tropfenden Wasserhahn reparieren",
    ),
}

PROBES: dict[str, tuple[str, ...]] = {
    lang: tuple(texts[i] for texts in TOPICS.values()) for i, lang in enumerate(LANGUAGES)
}


def probe_list() -> list[tuple[str, str, str]]:
    """(topic, language, text) of every probe, in a fixed order."""
    return [
        (topic, lang, text)
        for topic, texts in TOPICS.items()
        for lang, text in zip(LANGUAGES, texts, strict=True)
    ]
