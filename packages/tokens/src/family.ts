/**
 * Which tokenizer a model's counts come from, and the CJK estimate table for the model families
 * whose tokenizers are not shipped here.
 *
 * The estimate table is deliberately one constant: the factors are estimates (tokens per CJK
 * character, taken from each vendor's published guidance or measured samples, see the README) and
 * they are not tuned by the cl100k work. Everything that is not CJK in such a model's text is
 * still counted with cl100k, which is close for Latin-script text in all three families.
 */

export type EstimatedFamily = 'claude' | 'gemini' | 'deepseek';
export type TokenizerFamily = 'cl100k' | EstimatedFamily;

export interface CjkEstimate {
  /** Tokens per CJK character (Han, Hiragana, Katakana, Hangul, CJK punctuation and full-width forms). */
  readonly tokensPerCjkChar: number;
  /** Model-id patterns that select this family. */
  readonly models: RegExp;
}

/** The one table of CJK estimates. Changing a factor changes budgets for every conversation on that family. */
export const CJK_ESTIMATES: Readonly<Record<EstimatedFamily, CjkEstimate>> = Object.freeze({
  claude: { tokensPerCjkChar: 1.25, models: /(^|\/)(anthropic\/)?claude/i },
  gemini: { tokensPerCjkChar: 0.8, models: /(^|\/)(google\/)?(gemini|gemma)/i },
  deepseek: { tokensPerCjkChar: 0.6, models: /(^|\/)(deepseek\/)?deepseek/i },
});

/** The tokenizer family for a model id; unknown and OpenAI-style models count with cl100k. */
export function tokenizerFamily(model: string | undefined | null): TokenizerFamily {
  if (!model) return 'cl100k';
  for (const family of Object.keys(CJK_ESTIMATES) as EstimatedFamily[]) {
    if (CJK_ESTIMATES[family].models.test(model)) return family;
  }
  return 'cl100k';
}

/** CJK ideographs (incl. extension A and compatibility), kana, hangul, CJK symbols and full-width forms. */
const CJK_CHAR = /[\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/g;
const HAS_CJK = /[\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/;

export function containsCjk(text: string): boolean {
  return HAS_CJK.test(text);
}

/** Splits text into its CJK character count and the remaining (non-CJK) text. */
export function separateCjk(text: string): { cjkChars: number; rest: string } {
  let cjkChars = 0;
  const rest = text.replace(CJK_CHAR, () => {
    cjkChars++;
    return '';
  });
  return { cjkChars, rest };
}
