/**
 * The error text of a failed command leaves the device in its ack and is shown to operators
 * in the cloud. Errors raised on the device quote its files by absolute path (a step module
 * not found under `/srv/…/steps`, a file that could not be opened): that tells whoever reads
 * the cloud how the terminal's disk is laid out. Each absolute path keeps only its last
 * segment, which is what an operator needs to recognise the file.
 */

/**
 * An absolute path: POSIX (optionally as a `file://` URL) or Windows, starting a word (so the
 * path part of `https://host/a/b` is left alone), up to a blank, quote or bracket.
 */
const ABSOLUTE_PATH =
  /(?<=^|[\s'"`([,=])(?:file:\/\/)?(?:\/(?!\/)|[A-Za-z]:[\\/])[^\s'"`()[\]<>,;]*/g;

/** `text` with every absolute path cut to `…/` and its last segment. */
export function withoutAbsolutePaths(text: string): string {
  return text.replace(ABSOLUTE_PATH, (found) => {
    const segments = found.split(/[\\/]/).filter((segment) => segment !== '');
    const last = segments.at(-1);
    return last === undefined || /^[A-Za-z]:$/.test(last) ? '…' : `…/${last}`;
  });
}
