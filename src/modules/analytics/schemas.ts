import { Type } from 'typebox';
import { DateRangeQuery } from '../../platform/http/date-range.ts';
import { Timestamp } from '../../platform/http/schemas.ts';

// Schemas of the call analytics (DESIGN "Analytics").

export const RangeQuery = DateRangeQuery('Calls created');

export const Overview = Type.Object(
  {
    from: Timestamp,
    to: Timestamp,
    total_calls: Type.Integer(),
    by_status: Type.Record(Type.String(), Type.Integer()),
    minutes: Type.Number({ description: 'Connected minutes' }),
    cost_usd: Type.Number(),
    avg_duration_ms: Type.Integer({ description: 'Mean connected time of the calls that were answered' }),
    transfer_rate: Type.Number({ description: 'Transferred calls / answered calls (0 when none was answered)' }),
  },
  { title: 'CallAnalytics' },
);

export const Series = Type.Object(
  { data: Type.Array(Type.Object({ date: Type.String({ examples: ['2026-11-23'] }), count: Type.Integer(), minutes: Type.Number(), cost_usd: Type.Number() })) },
  { title: 'CallSeries' },
);
