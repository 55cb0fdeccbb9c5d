"""Calibration probes for prompt-time recall (I8): the generic requests a coding agent gets
every day — build and test failures, dependency chores, UI tweaks, git, "thanks, go on",
errors, refactors — with no domain words, in the languages of the relevance gate's probes.

They play the part the gate's small-talk probes (:data:`briefd.retrieval.gate.PROBES`) play for
search: how close a prompt comes to *them* says how generic it is, and how close they come to an
index (each one against the rest) says how far a generic prompt gets into that index (see
:mod:`briefd.recall.confidence`). Written as calibration data, apart from the recall-noise set
the eval measures with (``eval/recall-noise.yaml``; a test keeps the two disjoint).
"""

from __future__ import annotations

import functools

from briefd.text import query_terms, query_words

VERSION = "5"  # bump when the prompts or the margin change: stored calibrations are recomputed


def fitted_to(gate: str) -> str:
    """What recall's generic calibration made by this release over the relevance gate's fit
    ``gate`` (its fingerprint) is stored as: another release's, or another fit's, is made again."""
    return f"g{VERSION}:{gate}"


_REQUESTS: dict[str, tuple[str, ...]] = {
    "en": (
        "the pipeline failed again, please check",
        "fix the failing lint step",
        "why does the compiler complain about this line",
        "the release workflow broke after my last push",
        "gradle sync fails in the IDE",
        "go build says undefined: something after the rename",
        "make fails with no rule to make target",
        "the github action times out on the install step",
        "vite dev server won't start",
        "babel can't parse this syntax",
        "maven can't resolve a dependency",
        "the linker errors out with undefined reference",
        "make the unit tests pass",
        "add an integration test for the new page",
        "this test times out randomly",
        "write tests for the edge cases",
        "the e2e tests are broken after the redesign",
        "set up test coverage reporting",
        "this assertion fails but I don't see why",
        "add a regression test for the bug we just fixed",
        "mock the date so the test is deterministic",
        "parametrize this test",
        "upgrade all packages to their latest minor versions",
        "replace moment.js with date-fns",
        "bump the python version in the dockerfile",
        "go mod tidy changed a lot of things, is that ok",
        "resolve the peer dependency warning",
        "migrate from yarn to pnpm",
        "the lockfile has conflicts",
        "install the missing type definitions",
        "generate a .gitignore for a node project",
        "configure prettier to use single quotes",
        "set up a pre-commit hook for formatting",
        "add a makefile target to run the linter",
        "my editor shows red squiggles everywhere",
        "make the header sticky when scrolling",
        "align the icons in the navbar",
        "the dropdown menu renders behind the footer",
        "add a fade in animation to the card",
        "the image is stretched, keep the aspect ratio",
        "make the table scroll horizontally on small screens",
        "increase the padding around the form",
        "the text overflows the container",
        "add keyboard focus styles to the links",
        "use a grid layout for these cards",
        "add an empty state to the list",
        "the checkbox label is not clickable",
        "cherry-pick that fix onto the release branch",
        "resolve the merge conflict in this file",
        "amend the previous commit message",
        "stash my changes and switch branches",
        "delete the local branches that were merged",
        "I committed to the wrong branch",
        "push this and open a draft",
        "show me what changed since yesterday",
        "revert the merge commit",
        "address the review comments",
        "tag a new release",
        "sounds good, keep going",
        "perfect, thanks a lot",
        "please proceed",
        "nice, next step",
        "that worked, thanks",
        "go on",
        "sure",
        "hmm, that's not what I meant",
        "stop, wait",
        "can you do the same for the other file",
        "do it again but shorter",
        "why did you change that",
        "what went wrong here",
        "help me debug this exception",
        "KeyError when I run the script",
        "undefined is not a function in the console",
        "index out of range panic",
        "permission denied when running the script",
        "the process exits with code 137",
        "connection refused on localhost",
        "this promise never resolves",
        "the page is blank and nothing is in the console",
        "memory usage keeps growing",
        "it works on my machine but not on the server",
        "unexpected token in JSON at position 0",
        "attribute error: NoneType object has no attribute",
        "clean up this messy function",
        "move these constants into a separate file",
        "simplify this nested if statement",
        "write docstrings for these functions",
        "rename the folder and update the imports",
        "turn this callback code into async await",
        "deduplicate these two functions",
        "make this class immutable",
        "break this long method into smaller ones",
        "use a dictionary instead of this if chain",
        "what does this function do",
        "is there a simpler way to write this",
        "explain this code to me",
        "make this code more idiomatic",
        "translate this script from bash to python",
        "add error handling here",
        "sort this list by date",
        "parse this csv file",
        "read the config from environment variables",
        "optimize this function, it's slow",
        "add a command line flag for verbose output",
        "write a small script to rename these files",
    ),
    "tr": (
        "pipeline yine patladı, kontrol eder misin",
        "lint adımı hata veriyor",
        "derleyici bu satıra neden kızıyor",
        "github action kurulum adımında zaman aşımına uğruyor",
        "birim testleri geçir",
        "bu test rastgele zaman aşımına düşüyor",
        "uç durumlar için test yaz",
        "düzelttiğimiz hata için regresyon testi ekle",
        "paketleri son sürümlere güncelle",
        "lock dosyasında çakışma var",
        "eksik tip tanımlarını kur",
        "menü mobilde kayıyor",
        "ikonları hizala",
        "başlığı kaydırırken sabit tut",
        "resim gerilmiş, en boy oranını koru",
        "yazı kutunun dışına taşıyor",
        "forma biraz boşluk ekle",
        "merge conflict'i çöz",
        "commit mesajını düzelt",
        "yanlış branch'e commit attım",
        "değişikliklerimi stash'le ve branch değiştir",
        "review yorumlarını düzelt",
        "harika, devam et",
        "çok teşekkürler",
        "tamamdır, ilerle",
        "oldu, sağ ol",
        "bir sonraki adıma geç",
        "aynısını diğer dosya için de yap",
        "bunu neden değiştirdin",
        "ne ters gitti burada",
        "bu istisnayı ayıkla",
        "script'i çalıştırınca izin hatası alıyorum",
        "localhost'ta bağlantı reddedildi",
        "bellek kullanımı sürekli artıyor",
        "bende çalışıyor ama sunucuda çalışmıyor",
        "sayfa boş geliyor, konsolda da bir şey yok",
        "bu fonksiyonu sadeleştir",
        "sabitleri ayrı bir dosyaya taşı",
        "iç içe if'leri basitleştir",
        "fonksiyonlara açıklama yaz",
        "kodu biraz temizle",
        "bu callback'leri async await'e çevir",
        "bu uzun metodu küçük parçalara böl",
        "bu fonksiyon ne yapıyor",
        "bunu daha basit yazmanın yolu var mı",
        "buraya hata yönetimi ekle",
        "bu listeyi tarihe göre sırala",
        "bu csv dosyasını oku",
        "ayarları ortam değişkenlerinden oku",
        "bu fonksiyon yavaş, hızlandır",
    ),
    "de": (
        "der Build schlägt fehl",
        "danke, weiter so",
        "bitte die Tests reparieren",
        "aktualisiere die Abhängigkeiten",
        "was bedeutet dieser Fehler",
        "räum diese Funktion auf",
        "mach den Button etwas größer",
        "löse den Merge-Konflikt",
    ),
}

# Pasted tool output: a stack trace, a compiler's or a test runner's report, a CI, build,
# package manager, cluster or git error, alone or under a few words ("fix this"). An agent gets
# one in most sessions, and it reads like none of the requests above: far from all of them, its
# margin against the index was a specific question's (8 of 10 such pastes injected a section of
# the English example knowledge: "Storage schema" for a Java NullPointerException), and English
# tool output, closest on average to the Turkish requests, was measured against that
# language's lower levels. Among the probes, a paste is measured against its own kind.
# Calibration data like the requests, apart from every eval set.
_PASTED: dict[str, tuple[str, ...]] = {
    "en": (
        (
            "Traceback (most recent call last):\n"
            '  File "app.py", line 8, in <module>\n'
            "    import yaml\n"
            "ModuleNotFoundError: No module named 'yaml'"
        ),
        (
            "Traceback (most recent call last):\n"
            '  File "/srv/api/views.py", line 51, in get\n'
            "    return self.cache[key]\n"
            "AttributeError: 'NoneType' object has no attribute 'cache'"
        ),
        (
            "fix this\n"
            "Traceback (most recent call last):\n"
            '  File "run.py", line 3, in <module>\n'
            "    print(int(value))\n"
            "ValueError: invalid literal for int() with base 10: 'abc'"
        ),
        (
            "TypeError: undefined is not a function\n"
            "    at Object.<anonymous> (/home/user/project/index.js:10:5)\n"
            "    at Module._compile (node:internal/modules/cjs/loader:1256:14)"
        ),
        (
            "Unhandled Runtime Error\n"
            "Error: Hydration failed because the initial UI does not match what "
            "was rendered on the server."
        ),
        (
            'Exception in thread "main" java.lang.ArrayIndexOutOfBoundsException: '
            "Index 5 out of bounds for length 5\n"
            "\tat Main.main(Main.java:7)"
        ),
        (
            "panic: runtime error: invalid memory address or nil pointer dereference\n"
            "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a2b3c]\n"
            "\n"
            "goroutine 1 [running]:\n"
            "main.main()\n"
            "\t/app/main.go:15 +0x1c"
        ),
        (
            "error[E0308]: mismatched types\n"
            " --> src/main.rs:5:18\n"
            "  |\n"
            '5 |     let x: i32 = "five";\n'
            "  |            ---   ^^^^^^ expected `i32`, found `&str`"
        ),
        (
            "Unhandled exception. System.NullReferenceException: Object reference "
            "not set to an instance of an object.\n"
            "   at App.Program.Main(String[] args) in Program.cs:line 12"
        ),
        (
            "main.c: In function 'main':\n"
            "main.c:4:5: error: implicit declaration of function 'prinf'; did you "
            "mean 'printf'? [-Wimplicit-function-declaration]"
        ),
        (
            "src/app.ts:3:7 - error TS2339: Property 'foo' does not exist on type 'Bar'.\n"
            "\n"
            "3 const x = bar.foo;\n"
            "        ~~~\n"
            "Found 1 error."
        ),
        (
            "npm ERR! code ERESOLVE\n"
            "npm ERR! ERESOLVE unable to resolve dependency tree\n"
            "npm ERR! Found: react@18.2.0\n"
            "npm ERR! Could not resolve dependency:\n"
            'npm ERR! peer react@"^17.0.0" from some-lib@2.1.0'
        ),
        (
            "ERROR: Could not install packages due to an OSError: [Errno 13] "
            "Permission denied: '/usr/lib/python3/dist-packages'"
        ),
        (
            "[ERROR] Failed to execute goal "
            "org.apache.maven.plugins:maven-compiler-plugin:3.11.0:compile "
            "(default-compile) on project app: Compilation failure\n"
            "[ERROR] /src/main/java/App.java:[10,8] cannot find symbol"
        ),
        (
            "FAIL src/Button.test.tsx\n"
            "  ● Button › renders the label\n"
            "    expect(received).toBe(expected)\n"
            '    Expected: "Save"\n'
            '    Received: "Submit"\n'
            "Tests: 1 failed, 12 passed, 13 total"
        ),
        (
            "--- FAIL: TestParse (0.00s)\n"
            "    parse_test.go:21: got 3, want 4\n"
            "FAIL\n"
            "exit status 1\n"
            "FAIL\texample.com/parser\t0.012s"
        ),
        (
            "E   AssertionError: assert 200 == 404\n"
            "E    +  where 200 = <Response [200]>.status_code\n"
            "tests/test_api.py:33: AssertionError\n"
            "==== 1 failed, 20 passed in 1.42s ===="
        ),
        (
            "Run npm run build\n"
            "> build\n"
            "> vite build\n"
            "error during build:\n"
            'RollupError: Could not resolve "./styles.css" from "src/main.ts"\n'
            "Error: Process completed with exit code 1."
        ),
        (
            " => ERROR [3/5] RUN apt-get install -y libpq-dev\n"
            "#6 0.512 E: Unable to locate package libpq-dev\n"
            'ERROR: failed to solve: process "/bin/sh -c apt-get install -y '
            'libpq-dev" did not complete successfully: exit code: 100'
        ),
        (
            "Warning  Failed     3m   kubelet  Failed to pull image "
            '"registry.local/web:latest": rpc error: code = NotFound\n'
            "Warning  Failed     3m   kubelet  Error: ImagePullBackOff"
        ),
        (
            "Error: Error acquiring the state lock\n"
            "Lock Info:\n"
            "  ID:        8d1c2e3f\n"
            "  Path:      tfstate/terraform.tfstate\n"
            "  Operation: OperationTypeApply"
        ),
        (
            "! [rejected]        main -> main (non-fast-forward)\n"
            "error: failed to push some refs to 'origin'"
        ),
        (
            "CONFLICT (content): Merge conflict in src/config.js\n"
            "Automatic merge failed; fix conflicts and then commit the result."
        ),
        (
            "Error: connect ECONNREFUSED 127.0.0.1:5432\n"
            "    at TCPConnectWrapper.afterConnect [as oncomplete] (node:net:1555:16)"
        ),
        "sqlite3.OperationalError: database is locked",
        (
            "Access to fetch at 'http://localhost:8000/api' from origin "
            "'http://localhost:3000' has been blocked by CORS policy: No "
            "'Access-Control-Allow-Origin' header is present on the requested resource."
        ),
        (
            "/home/user/app/src/components/List.jsx\n"
            "  12:5  warning  React Hook useEffect has a missing dependency: "
            "'load'  react-hooks/exhaustive-deps\n"
            "✖ 1 problem (0 errors, 1 warning)"
        ),
        (
            "Killed\n"
            'error Command failed with signal "SIGKILL".\n'
            "info Visit https://yarnpkg.com/en/docs/cli/run for documentation "
            "about this command."
        ),
        'FATAL: password authentication failed for user "postgres"',
        (
            "* What went wrong:\n"
            "Execution failed for task ':app:mergeDebugResources'.\n"
            "> A failure occurred while executing "
            "com.android.build.gradle.internal.res.ResourceCompilerRunnable"
        ),
    ),
    "tr": (
        (
            "bu hatayı çöz\n"
            "Traceback (most recent call last):\n"
            '  File "main.py", line 12, in <module>\n'
            "    data = json.load(f)\n"
            "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
        ),
        (
            "neden patlıyor\n"
            "npm ERR! code ENOENT\n"
            "npm ERR! syscall open\n"
            "npm ERR! path /home/user/app/package.json\n"
            "npm ERR! errno -2"
        ),
    ),
}
# Every probe, by language (its requests, then its pasted output): what the hybrid and keyword
# calibrations measure. The chatter words below are the requests' alone.
GENERIC_PROMPTS: dict[str, tuple[str, ...]] = {
    language: group + _PASTED.get(language, ()) for language, group in _REQUESTS.items()
}

# Words that take a turn without naming a topic: go-aheads, thanks, "again", "next". Not probes
# (the calibration above is untouched): with the probes' words they tell everyday chatter from a
# question in :func:`chatter`, which decides only what the gaps report (T3) counts.
_TURNS = """
continue proceed go ahead keep going carry yes yeah yep yup ok okay thanks thank thx sure great
good nice perfect fine cool awesome sounds looks lgtm next again retry rerun redo try done stop
wait hmm right correct agreed
devam tamam tamamdır evet teşekkürler teşekkür sağ ol harika güzel süper ilerle tekrar sonraki
dur bekle
weiter danke ja gut nochmal bitte
"""
TURN_WORDS = frozenset(_TURNS.split())
CHATTER_TERMS = 3  # a longer prompt names what it is about, whatever its words


@functools.cache
def probe_shares() -> dict[str, float]:
    """Per term (as prompts' terms read), the share of the generic probes holding it: how
    common the word is in everyday agent prompts (see :func:`briefd.recall.evidence.telling`)."""
    probes = [set(query_terms(p)) for group in GENERIC_PROMPTS.values() for p in group]
    held: dict[str, int] = {}
    for terms in probes:
        for term in terms:
            held[term] = held.get(term, 0) + 1
    return {term: count / len(probes) for term, count in held.items()}


@functools.cache
def _vocabulary() -> tuple[frozenset[str], frozenset[str]]:
    """(every word of the probes and turn words, the turn words), as prompts' terms read."""
    turns = frozenset(t for w in TURN_WORDS for t in query_words(w))
    probes = (t for prompts in _REQUESTS.values() for p in prompts for t in query_terms(p))
    return frozenset(probes) | turns, turns


def chatter(prompt: str) -> bool:
    """Whether a prompt is everyday agent chatter by its words alone ("continue", "thanks, go
    on", "run the tests again"): turn words only, or at most ``CHATTER_TERMS`` content words,
    each a word of the generic probes or a turn word, one at least a turn word. "release
    workflow" (probe words only) and "kubernetes autoscaling" are not: they may be questions
    the knowledge misses."""
    terms = query_terms(prompt)
    everyday, turns = _vocabulary()
    if not terms or not any(t in turns for t in terms):
        return False
    return all(t in turns for t in terms) or (
        len(terms) <= CHATTER_TERMS and all(t in everyday for t in terms)
    )


@functools.cache
def _own_words() -> dict[str, frozenset[str]]:
    """Per language: the words of its generic requests that no other language's requests hold
    (its function words among them: "that", "the", "bu", "ne")."""
    words = {
        n: frozenset(w for p in group for w in query_words(p)) for n, group in _REQUESTS.items()
    }
    return {
        n: own.difference(*(other for m, other in words.items() if m != n))
        for n, own in words.items()
    }


def mostly_in(prompt: str, language: str) -> bool:
    """Whether more than half of a prompt's words are words only ``language``'s generic requests
    hold: it is written in that language, whatever its vector's nearest probes say. A few words
    of chatter sit as close to their translation as to themselves in the model's space ("no,
    revert that last change": its nearest probes "why did you change that", then its Turkish
    translation), so the vector alone can read them in another language."""
    words = query_words(prompt)
    own = _own_words().get(language, frozenset())
    return 2 * sum(w in own for w in words) > len(words)
