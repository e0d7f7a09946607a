import type { Rule } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { Checkbox } from '../../../components/form/Checkbox';
import { Icon } from '../../../components/Icon';

const NEW_RULE: Rule = { regex: false, allow: true, path: '', regexp: { raw: '' } };

/** Allow/deny rules, evaluated in order on the server; the last matching rule wins. */
export function RulesEditor({ rules, onChange }: { rules: Rule[]; onChange: (rules: Rule[]) => void }) {
  const { t } = useTranslation();

  const update = (index: number, patch: Partial<Rule>) =>
    onChange(rules.map((rule, i) => (i === index ? { ...rule, ...patch } : rule)));

  return (
    <fieldset className="fieldset rules">
      <legend>{t('settings.rules.title')}</legend>
      <p className="field__hint">{t('settings.rules.description')}</p>
      {rules.length > 0 && (
        <ol className="rules__list">
          {rules.map((rule, index) => {
            const label = rule.regex ? t('settings.rules.regexp') : t('settings.rules.path');
            return (
              <li key={index} className="rules__row">
                <Checkbox
                  label={t('settings.rules.regex')}
                  checked={rule.regex}
                  onChange={(regex) => update(index, { regex })}
                />
                <Checkbox
                  label={t('settings.rules.allow')}
                  checked={rule.allow}
                  onChange={(allow) => update(index, { allow })}
                />
                <input
                  className="input rules__value"
                  type="text"
                  aria-label={`${label} ${index + 1}`}
                  placeholder={
                    rule.regex ? t('settings.rules.regexpPlaceholder') : t('settings.rules.pathPlaceholder')
                  }
                  spellCheck={false}
                  value={rule.regex ? (rule.regexp?.raw ?? '') : rule.path}
                  onChange={(event) =>
                    update(
                      index,
                      rule.regex ? { regexp: { raw: event.target.value } } : { path: event.target.value },
                    )
                  }
                />
                <button
                  type="button"
                  className="icon-button"
                  aria-label={t('settings.rules.remove', { number: index + 1 })}
                  onClick={() => onChange(rules.filter((_, i) => i !== index))}
                >
                  <Icon name="delete" />
                </button>
              </li>
            );
          })}
        </ol>
      )}
      <button
        type="button"
        className="button button--flat"
        onClick={() => onChange([...rules, { ...NEW_RULE }])}
      >
        <Icon name="add" />
        {t('settings.rules.add')}
      </button>
    </fieldset>
  );
}
