/**
 * Library search over the indexed columns of migration 085.
 * - Latin (and any spaced) text: a world matches when its full-text vector matches the query as a
 *   web search (`websearch_to_tsquery`: words, "phrases", -exclusions, or) or when its search
 *   document contains the query as typed (pg_trgm's GIN index answers the `ilike`: partial words
 *   and infixes). Both are index scans; the planner ORs the two bitmaps.
 * - CJK runs (no spaces between words): every overlapping pair of the query's characters (the
 *   character itself for a run of one) must be in the vector, which holds each CJK run's
 *   characters and pairs: any part of a CJK text is found through the same GIN index, also for
 *   the one- and two-character queries trigrams cannot serve.
 * Relevance: full-text rank (name above tags and author above description) plus a bonus when the
 * name contains the query as typed (case-insensitively). Trigram word similarity ranked partial words a little better
 * but cost ~10× the rest of the query per hit.
 */

/**
 * What a search adds to the library query: a condition over `w`, and its rank expression (which
 * pushes its own parameter when called, so a query sorted otherwise sends none unused).
 */
export interface LibrarySearch {
  where: string;
  rank(): string;
  /** Set when the query is one word (migration 098's world_terms ranks it): see oneWord. */
  oneWord?: OneWord;
}

/**
 * A query of one word: a Latin word (letters and digits) or one CJK character or pair. Its
 * relevance is what migration 098 keeps in world_terms for `lexeme`, so its hits come in rank
 * order from an index. `guard()` (pushing its parameter) is a condition true when PostgreSQL's
 * own parse of the query is that one lexeme (otherwise the library ranks the hits as for any
 * query). `partial` (Latin only): the search also finds the query inside longer words (pg_trgm),
 * which world_terms does not hold; `tsquery` is the query's expression.
 */
export interface OneWord {
  lexeme: string;
  partial: boolean;
  tsquery: string;
  guard(): string;
}

/** A word the full-text parser keeps whole: letters and digits only (no CJK: those are grams). */
const WORD = /^[\p{L}\p{N}]+$/u;

const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+/gu;

/** `%text%` for LIKE with the wildcards of the text escaped. */
export const containsPattern = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The characters (runs of one) and overlapping pairs of the CJK runs of `text`, as migration 085 indexes them. */
export function cjkGrams(text: string): string[] {
  const grams = new Set<string>();
  for (const run of text.match(CJK_RUN) ?? []) {
    const chars = [...run];
    if (chars.length === 1) grams.add(chars[0]!);
    for (let i = 0; i + 1 < chars.length; i++) grams.add(chars[i]! + chars[i + 1]!);
  }
  return [...grams];
}

/**
 * The search fragments for query text `q`, pushing their parameters onto `params` (so they number
 * after the caller's). The rank is a float ≥ 0; the library turns it into an integer sort key.
 */
export function librarySearch(q: string, params: unknown[]): LibrarySearch {
  const conditions: string[] = [];
  const queries: string[] = [];
  const spaced = q.replace(CJK_RUN, ' ').trim();
  const grams = cjkGrams(q);
  let oneWord: { lexeme: string; partial: boolean; tsquery: string } | undefined;
  if (spaced) {
    params.push(spaced);
    const tsquery = `websearch_to_tsquery('simple', $${params.length})`;
    params.push(containsPattern(spaced));
    conditions.push(`(w.search_vector @@ ${tsquery} or w.search_document ilike $${params.length})`);
    queries.push(tsquery);
    // The rank's name bonus looks for the query as typed (lowercased): the word itself.
    if (!grams.length && WORD.test(spaced) && spaced === q) oneWord = { lexeme: spaced.toLowerCase(), partial: true, tsquery };
  }
  if (grams.length) {
    params.push(grams.join(' & '));
    const tsquery = `to_tsquery('simple', $${params.length})`;
    conditions.push(`w.search_vector @@ ${tsquery}`);
    queries.push(tsquery);
    // One CJK run of one or two characters, nothing else: the bonus looks for that run, its only gram.
    if (!spaced && grams.length === 1 && grams[0] === q) oneWord = { lexeme: grams[0], partial: false, tsquery };
  }
  const word = oneWord && {
    ...oneWord,
    guard() {
      params.push(`'${oneWord.lexeme}'`);
      return `${oneWord.tsquery}::text = $${params.length}`;
    },
  };
  return {
    oneWord: word,
    where: conditions.length ? conditions.join(' and ') : 'false',
    rank() {
      params.push(containsPattern(q));
      // lower() of every hit's name is a third of a CJK search's time; a query without cased
      // letters (CJK, digits) is found in the name as it is.
      const name = q.toLowerCase() === q.toUpperCase() ? 'coalesce(w.live_name, w.name)' : 'lower(coalesce(w.live_name, w.name))';
      const named = `case when ${name} like $${params.length} then 1 else 0 end`;
      return `(ts_rank(w.search_vector, ${queries.join(' && ') || `''::tsquery`}) + ${named})`;
    },
  };
}
