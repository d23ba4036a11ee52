"""Rules of the bundle layer (BK501-BK599): the platform's verdict on a submitted zip.

A bundle is not a manifest, so these rules have no check function of their own;
``blockkit.bundle.check`` produces their findings. The caps are
``blockkit.platform.BUNDLE_LIMITS``.
"""

from __future__ import annotations

from blockkit.diff.rules import _doc
from blockkit.rules.base import declare

BUNDLE_TOO_LARGE = declare("BK501", "bundle-too-large", layer="bundle", severity="error", stage="submit", doc=_doc(
    "The bundle is larger than the platform accepts (50 MiB).",
    "Measures the zip as it would be uploaded (the decoded bytes of `bundleBase64`) against the platform's "
    "bundle cap, 52428800 bytes. Nothing else in a bundle over the cap is read.",
    "The platform's `submitVersion` refuses such a bundle before it opens it: "
    "\"bundle is N bytes (max 52428800)\".",
    "a 61 MB zip holding a `videos/` folder of demo clips",
    "Ship only the source: leave build output, media that the app can load from a URL, and dependencies out "
    "(`blockkit package` does that as the platform's CLI does)."))

BUNDLE_EMPTY = declare("BK502", "bundle-empty", layer="bundle", severity="error", stage="submit", doc=_doc(
    "The bundle is empty, or holds no file.",
    "Reports a bundle of zero bytes, and a zip whose entries are all directories.",
    "The platform refuses it (\"bundle is empty\", \"bundle is empty (no files)\"): there is nothing to build.",
    "a zip made from the wrong folder, holding only `src/`",
    "Package the block's root folder, the one holding `block.manifest.json`."))

BUNDLE_UNREADABLE = declare("BK503", "bundle-unreadable", layer="bundle", severity="error", stage="submit",
                            doc=_doc(
    "The bundle is not a zip archive that can be read.",
    "Reports bytes that are not a zip (no end-of-central-directory record), a truncated archive, an entry whose "
    "data does not match its header (bad CRC, sizes that lie, a name that differs from the local header), and "
    "entries that are encrypted or use a compression method other than stored or deflate.",
    "The platform opens the bundle with a zip library and refuses what it cannot read; a header that lies "
    "about its sizes is also how a zip bomb hides.",
    "a zip cut off by an interrupted download, or a `.tar.gz` renamed to `.zip`",
    "Build the zip again (`blockkit package`), without encryption."))

TOO_MANY_FILES = declare("BK504", "bundle-too-many-files", layer="bundle", severity="error", stage="submit",
                         doc=_doc(
    "The bundle holds more files than the platform accepts (2000).",
    "Counts the entries that are not directories against the platform's cap. A central directory that declares "
    "far more entries than that is refused from the archive's end record, before its entries are parsed.",
    "The platform refuses it: \"bundle contains N files (max 2000)\".",
    "a bundle with `node_modules/` inside: thousands of files",
    "Leave dependencies and build output out; the platform installs and builds from the source."))

FILE_TOO_LARGE = declare("BK505", "bundle-file-too-large", layer="bundle", severity="error", stage="submit",
                         doc=_doc(
    "A file of the bundle is larger than the platform accepts (10 MiB decompressed).",
    "Checks each entry's size as its header declares it, before reading it, and again while it is "
    "decompressed, counting the bytes, since a header can lie.",
    "The platform stops decompressing at the cap and refuses the bundle: \"bundle file PATH is over 10485760 "
    "bytes\".",
    "`public/intro.mp4`, 24 MB",
    "Serve large media from a URL, or make it smaller."))

DECOMPRESSED_TOO_LARGE = declare("BK506", "bundle-decompressed-too-large", layer="bundle", severity="error",
                                 stage="submit", doc=_doc(
    "The bundle decompresses to more than the platform accepts (200 MiB): a zip bomb, or too much content.",
    "Adds up the decompressed sizes of every entry, as declared before anything is read and as counted while "
    "reading, against the platform's total cap.",
    "The cap is the platform's defence against zip bombs: a small archive that inflates to gigabytes. It "
    "refuses the bundle (\"bundle decompresses to more than 209715200 bytes (zip bomb?)\").",
    "a 40 KB zip whose one entry inflates to 4 GB",
    "Ship only source files; if they truly need more room, split large assets out to a URL."))

UNSAFE_PATH = declare("BK507", "bundle-unsafe-path", layer="bundle", severity="error", stage="submit", doc=_doc(
    "An entry's name escapes the bundle: an absolute path, `..`, a drive letter or a backslash.",
    "Reports entry names that start with `/` or a drive letter (`C:`), that hold a `..` segment, a backslash "
    "or a NUL character.",
    "Whoever extracts such a bundle may write outside the folder it extracts into (path traversal, "
    "\"zip slip\"). The platform's zip library rewrites `..` away, so the file would land under another name "
    "than the one you see.",
    "an entry named `../../etc/cron.d/job` or `/home/me/block/index.html`",
    "Build the zip from the block's folder with relative names (`blockkit package`)."))

DUPLICATE_ENTRY = declare("BK508", "bundle-duplicate-entry", layer="bundle", severity="error", stage="submit",
                          doc=_doc(
    "Two entries of the bundle have the same name.",
    "Reports every name that appears more than once in the central directory.",
    "Which copy counts depends on the reader: the platform's zip library keeps the last one, a reviewer's "
    "tool may show the first. A bundle whose content depends on the reader cannot be reviewed.",
    "`index.html` twice, appended by `zip -g` after an edit",
    "Build the zip anew rather than appending to it."))

SYMLINK_ENTRY = declare("BK509", "bundle-symlink", layer="bundle", severity="error", stage="submit", doc=_doc(
    "An entry of the bundle is a symbolic link.",
    "Reports entries whose Unix mode (the upper half of the external attributes) marks them as symbolic links.",
    "A link's target is a path on the machine that extracts the bundle, outside the block's source; the "
    "platform's CLI never packages links.",
    "`config.js -> /home/me/secrets/config.js`",
    "Replace the link by the file it points at, or leave it out."))

MANIFEST_MISSING = declare("BK510", "bundle-manifest-missing", layer="bundle", severity="error", stage="submit",
                           doc=_doc(
    "The bundle has no `block.manifest.json` at its root.",
    "Looks for an entry named exactly `block.manifest.json` (not in a folder).",
    "The manifest is the submission's source of truth: the platform reads the slug, version and name from it "
    "and refuses a bundle without it (\"bundle is missing required file: block.manifest.json\").",
    "a zip of the folder above the block: `my-block/block.manifest.json`",
    "Zip the block's folder itself, so that the manifest is at the root."))

BODY_OVER_ROUTE_LIMIT = declare("BK511", "submit-body-too-large", layer="bundle", severity="error", stage="submit",
                                doc=_doc(
    "The submit request's body would be larger than the submit route accepts (72 MiB).",
    "Computes the JSON body `{\"bundleBase64\": \"...\"}` the submission sends (base64 adds a third) and "
    "compares it with the route's body limit, and the base64 string with the schema's cap.",
    "The route refuses a larger body before the platform reads it.",
    "a 56 MB zip: 75 MB once base64-encoded",
    "Make the bundle smaller (see BK501)."))

BODY_OVER_PROXY_LIMIT = declare("BK512", "submit-body-over-proxy-limit", layer="bundle", severity="error",
                                stage="submit", doc=_doc(
    "The submit request's body would be larger than the platform's proxy lets through (10 MiB).",
    "Computes the JSON body the submission sends and compares it with 10485760 bytes, the limit of the proxy "
    "in front of the platform, which the platform's CLI enforces.",
    "The proxy cuts a larger body short, and the platform answers \"400: Invalid JSON\", which names nothing "
    "about size: a bundle of 8.2 MB failed this way.",
    "a 7.9 MB zip: 10.5 MB once base64-encoded",
    "Keep the zip under about 7.5 MB: leave media and build output out, or load large assets from a URL."))

PREVIOUS_UNREADABLE = declare("BK513", "previous-bundle-unreadable", layer="bundle", severity="warning",
                              stage="submit", doc=_doc(
    "The previous bundle to compare against cannot be read, so there is no diff.",
    "Reports a previous bundle that is not a readable zip or has no readable manifest object; the file summary "
    "and the manifest diff are then those of a first version.",
    "Without the previous version, the version guard (BK401) and the list of changed files cannot be checked.",
    "`blockkit package --previous old.zip` where old.zip is truncated",
    "Pass the bundle of the last approved version."))

CREDENTIAL = declare("BK520", "bundle-credential", layer="bundle", severity="warning", stage="submit", doc=_doc(
    "A file of the bundle looks like it holds a credential.",
    "Scans the text files that would ship for private keys, well-known token formats (AWS, GitHub, Slack, "
    "Stripe, Google, OpenAI, JSON Web Tokens), URLs with a password, and assignments of a long literal to a "
    "name such as `API_KEY`, `TOKEN`, `SECRET` or `PASSWORD`. It reports the file, the line and the key's "
    "name, never the value. Placeholders (`your-key-here`, `xxx`, `${VAR}`) are not reported.",
    "A bundle is stored, pushed to a review repository, read by a moderator and built into the deployed app: "
    "a credential in it is published and cannot be recalled. A block token pasted into a dotenv file that "
    "ships is a known case.",
    "`src/config.js:3` `const API_KEY = \"sk_live_...\"`",
    "Remove the value from the source, revoke it, and read it at run time from where the platform provides "
    "it (the block token the host hands over), or keep it in a dotenv file that is not packaged (`.env.local`)."))

SCREENSHOT_INVALID = declare("BK514", "bundle-screenshot-invalid", layer="bundle", severity="error",
                             stage="submit", doc=_doc(
    "A file under `screenshots/` is not a screenshot the platform accepts.",
    "Every file under `screenshots/` is a store screenshot. At most 8 of them; each with a flat name "
    "(`[A-Za-z0-9][A-Za-z0-9._-]*`, no folder), the extension png, webp, jpg or jpeg, at most 2 MiB, and "
    "bytes that really are an image of that type (the PNG signature, the JPEG start marker, a RIFF WEBP "
    "container).",
    "The platform checks screenshots at submit and refuses the whole submission when one fails: "
    "screenshots are shown publicly in the store, so they get tighter caps than other files, and a ninth "
    "file is refused rather than dropped so that nothing hides behind the cut.",
    "`screenshots/notes.txt`, `screenshots/shot-1.png` holding a JPEG, or `screenshots/big.png` of 3 MB",
    "Keep only real images in `screenshots/`, named like `shot-1.png`, each under 2 MiB; move anything else "
    "out of the folder."))
