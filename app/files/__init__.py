"""Files people share (docs/how-tomo-works.md#files): read only from Slack's own file host with
the bot token, within a size, a time and a memory limit.

- `fetch`: the download (host check, size cap, Slack's sign-in page and error answers told
  apart from a file), and files.info for Slack Connect stubs.
- `images`: an image downscaled (Pillow) to a `data:` URI a vision model takes, one at a time.
- `decoding`: what decoding a picture will cost in memory, told from its header; one that
  would cost too much is never decoded.
- `documents`: a PDF's text (pypdf), a text file's or snippet's, capped.
- `shown`: a message's text with the text read from its documents, as prompts show it.
- `budget`: the bytes of downloaded files held at once, within a bound.
- `cache`: what is kept of files lately read (images, refusals), bounded in time and bytes.
- `reader`: what a job's prompt needs of its context's files, read once and kept a while.
"""
