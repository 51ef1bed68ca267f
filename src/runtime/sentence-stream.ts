// Cuts a reply streamed in fragments into sentences as soon as each is complete, so speech of the
// first sentence starts while the model is still writing the rest.

const BOUNDARY = /[.!?…]+["')\]]?\s+/g;

export function createSentenceStream(onSentence: (sentence: string) => void) {
  let buffer = '';
  return {
    push(fragment: string) {
      buffer += fragment;
      let cut = 0;
      BOUNDARY.lastIndex = 0;
      for (let match = BOUNDARY.exec(buffer); match; match = BOUNDARY.exec(buffer)) {
        const sentence = buffer.slice(cut, match.index + match[0].length).trim();
        cut = match.index + match[0].length;
        if (sentence) onSentence(sentence);
      }
      buffer = buffer.slice(cut);
    },
    /** The rest, at the end of the reply. */
    flush() {
      const rest = buffer.trim();
      buffer = '';
      if (rest) onSentence(rest);
    },
  };
}

/** A whole text cut into its sentences (a fixed line: greeting, prompt, voicemail message). */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  const splitter = createSentenceStream((sentence) => out.push(sentence));
  splitter.push(text);
  splitter.flush();
  return out;
}

/** The words of `text` heard when `played` of `total` frames were played, cut at a word boundary. */
export function playedWords(text: string, played: number, total: number): string {
  if (total <= 0 || played >= total) return text;
  if (played <= 0) return '';
  const words = text.split(/\s+/).filter(Boolean);
  const heard = Math.floor((words.length * played) / total);
  return words.slice(0, heard).join(' ');
}
