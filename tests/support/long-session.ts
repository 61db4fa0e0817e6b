import type { Queryable } from '@yumina/db';

/**
 * A long session for paging tests and the session benchmark: replaces the messages of session
 * `sessionId` with `count` alternating user and assistant messages shaped like a real story's
 * (the figures of issue 24: 2,000 messages made a 4.9 MB response): a user line of ~150
 * characters, a reply of ~900, a state snapshot of 24 variables after each, two alternatives
 * (each with its own snapshot) on every reply. Message i's text starts with `#i ` so a test can
 * tell them apart. Returns the message count.
 */
export async function fillLongSession(db: Queryable, sessionId: string, count = 2000): Promise<number> {
  const variables = Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`variable_${i}`, i % 3 ? i * 7 : `value of ${i}`]));
  const reply = 'The torchlight wavers across the wet stones as the corridor narrows. '.repeat(13);
  const line = 'I raise the lantern, listen at the door and then step through it. '.repeat(2);
  await db.query('delete from chat_messages where session_id = $1', [sessionId]);
  await db.query(
    `insert into chat_messages (id, session_id, position, role, content, raw_content, state_snapshot, state_changes, swipes, active_swipe_index)
     select $1 || '_' || i, $1, i, case when i % 2 = 0 then 'user' else 'assistant' end,
            '#' || i || ' ' || case when i % 2 = 0 then $3 else $4 end,
            '#' || i || ' ' || case when i % 2 = 0 then $3 else $4 end,
            jsonb_set($2::jsonb, '{turn}', to_jsonb(i))::text, '[]',
            case when i % 2 = 0 then '[]' else json_build_array(
              json_build_object('content', '#' || i || ' ' || $4, 'rawContent', '#' || i || ' ' || $4, 'snapshot', $2::json, 'stateChanges', '[]'::json),
              json_build_object('content', '#' || i || ' (again) ' || $4, 'rawContent', '#' || i || ' ' || $4, 'snapshot', $2::json, 'stateChanges', '[]'::json))::text end,
            0
       from generate_series(0, $5 - 1) i`,
    [sessionId, JSON.stringify({ variables }), line, reply, count],
  );
  await db.query('update chat_sessions set message_count = $2 where id = $1', [sessionId, count]);
  return count;
}
