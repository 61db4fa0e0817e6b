/**
 * What needs a person (issue 51, point 6; docs/OPERATIONS.md "What an operator watches"): alarms
 * on the metrics the container writes as CloudWatch embedded-metric-format lines
 * (containers/api/src/operator-metrics.ts: namespace `Yumina`, dimension `Service=api`), sent to
 * the SNS topic `Alarms`. Set `ALARM_EMAIL` when deploying to have them mailed (the address confirms
 * the subscription once); otherwise subscribe a pager or chat integration to the topic.
 */
export const METRICS_NAMESPACE = 'Yumina';
export const METRICS_SERVICE = 'api';

export interface AlarmRule {
  name: string;
  description: string;
  metricName: string;
  /** `Sum` of counts, `Maximum`, or a percentile such as `p99`. */
  statistic: 'Sum' | 'Maximum' | 'p99';
  periodSeconds: number;
  /** Breaching periods out of `evaluationPeriods` before it fires. */
  datapointsToAlarm: number;
  evaluationPeriods: number;
  threshold: number;
}

export const ALARM_RULES: AlarmRule[] = [
  {
    name: 'ProviderErrors',
    description: 'AI provider calls keep failing (any kind; the Kind dimension says which): players get errors instead of replies.',
    metricName: 'ProviderErrors',
    statistic: 'Sum',
    periodSeconds: 300,
    datapointsToAlarm: 2,
    evaluationPeriods: 3,
    threshold: 50,
  },
  {
    name: 'TurnsFailing',
    description: 'Many turns end in a failure (provider, database or deadline).',
    metricName: 'TurnsFailed',
    statistic: 'Sum',
    periodSeconds: 300,
    datapointsToAlarm: 2,
    evaluationPeriods: 3,
    threshold: 50,
  },
  {
    name: 'AdmissionRefusals',
    description: 'Replicas refuse turns and stream openings (503 SERVER_BUSY): more replicas than autoscaling allows are needed, or the database is slow.',
    metricName: 'AdmissionRefusals',
    statistic: 'Sum',
    periodSeconds: 300,
    datapointsToAlarm: 2,
    evaluationPeriods: 3,
    threshold: 500,
  },
  {
    name: 'TurnLatency',
    description: 'The slowest 1 % of turns take over a minute to finish.',
    metricName: 'TurnLatency',
    statistic: 'p99',
    periodSeconds: 300,
    datapointsToAlarm: 3,
    evaluationPeriods: 3,
    threshold: 60_000,
  },
  {
    name: 'EventLoopStalls',
    description: 'A replica stalls (its event loop blocked): requests wait behind it.',
    metricName: 'EventLoopStalls',
    statistic: 'Sum',
    periodSeconds: 300,
    datapointsToAlarm: 2,
    evaluationPeriods: 2,
    threshold: 5,
  },
];

export const alarmTopic = new aws.sns.Topic('Alarms');
if (process.env.ALARM_EMAIL) new aws.sns.TopicSubscription('AlarmEmail', { topic: alarmTopic.arn, protocol: 'email', endpoint: process.env.ALARM_EMAIL });

export const alarms = ALARM_RULES.map(
  (rule) =>
    new aws.cloudwatch.MetricAlarm(`Alarm${rule.name}`, {
      alarmDescription: rule.description,
      namespace: METRICS_NAMESPACE,
      metricName: rule.metricName,
      dimensions: { Service: METRICS_SERVICE },
      ...(rule.statistic === 'p99' ? { extendedStatistic: 'p99' } : { statistic: rule.statistic }),
      period: rule.periodSeconds,
      evaluationPeriods: rule.evaluationPeriods,
      datapointsToAlarm: rule.datapointsToAlarm,
      threshold: rule.threshold,
      comparisonOperator: 'GreaterThanOrEqualToThreshold',
      // no line in a period (no turns, no errors) is not a breach
      treatMissingData: 'notBreaching',
      alarmActions: [alarmTopic.arn],
      okActions: [alarmTopic.arn],
    }),
);
